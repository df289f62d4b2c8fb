from reharness.cli.main import app

app()
