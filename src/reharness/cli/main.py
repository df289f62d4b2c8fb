"""The ``reharness`` command."""

from __future__ import annotations

import typer
from rich.table import Table

from reharness.cli.agent_cmd import agent_app
from reharness.cli.common import stdout
from reharness.cli.experiment_cmd import experiment_app
from reharness.cli.improve_cmd import demo, improve
from reharness.cli.packet_cmd import packet
from reharness.cli.patch_cmd import patch_app
from reharness.cli.pool_cmd import pool_app
from reharness.cli.run_cmd import run
from reharness.cli.show_cmd import export, show
from reharness.cli.train_cmd import train_app
from reharness.cli.view_cmd import view

app = typer.Typer(
    name="reharness",
    help="Measure, patch, evolve and learn an LLM agent's harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def envs() -> None:
    """List the built-in environments."""
    from reharness.envs.registry import BUILTIN_ENVS

    table = Table(title="environments")
    for col in ("name", "gymnasium id", "description"):
        table.add_column(col)
    for spec in BUILTIN_ENVS.values():
        table.add_row(spec.name, spec.gym_id, spec.summary)
    stdout.print(table)


app.command()(run)
app.command()(show)
app.command()(export)
app.command()(packet)
app.command()(improve)
app.command()(demo)
app.command()(view)
app.add_typer(patch_app, name="patch")
app.add_typer(agent_app, name="agent")
app.add_typer(train_app, name="train")
app.add_typer(experiment_app, name="experiment")
app.add_typer(pool_app, name="pool")


if __name__ == "__main__":  # pragma: no cover
    app()
