"""Command-line interface (typer): one module per command group."""
