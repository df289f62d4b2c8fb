"""The ``reharness`` command."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.table import Table

from reharness.cli.agent_cmd import agent_app
from reharness.cli.common import friendly_errors, stdout
from reharness.cli.experiment_cmd import experiment_app
from reharness.cli.improve_cmd import demo, improve
from reharness.cli.packet_cmd import packet
from reharness.cli.patch_cmd import patch_app
from reharness.cli.pool_cmd import pool_app
from reharness.cli.run_cmd import run
from reharness.cli.show_cmd import export, show
from reharness.cli.train_cmd import train_app

app = typer.Typer(
    name="reharness",
    help="Measure, patch, evolve and learn an LLM agent's harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
@friendly_errors
def envs(
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List every environment kit this installation can find and where each came from: the built-ins, the
    installed distributions' `reharness.kits` entry points (and any gymnasium text env as `--env gym:ID`, or
    a kit object as `--env module.path:attribute`)."""
    from reharness.envs.registry import all_kits

    rows = all_kits()
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(row) for row in rows], indent=2))
        return
    table = Table(title="environments")
    for col in ("name", "source", "gymnasium id", "description"):
        table.add_column(col)
    for row in rows:
        table.add_row(row.name, row.source, row.gym_id, row.summary)
    stdout.print(table)
    stdout.print("also: --env gym:ID (any gymnasium text environment), --env module.path:attribute (a kit)")


app.command()(run)
app.command()(show)
app.command()(export)
app.command()(packet)
app.command()(improve)
app.command()(demo)
app.add_typer(patch_app, name="patch")
app.add_typer(agent_app, name="agent")
app.add_typer(train_app, name="train")
app.add_typer(experiment_app, name="experiment")
app.add_typer(pool_app, name="pool")


if __name__ == "__main__":  # pragma: no cover
    app()
