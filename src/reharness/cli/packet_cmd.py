"""``reharness packet``: the failure packet of a finished run, as the engineer's prompt text or as JSON."""

from __future__ import annotations

from typing import Annotated

import typer

from reharness.cli.common import RunDir, friendly_errors
from reharness.failures.packets import STRATEGIES, extract_packet
from reharness.failures.render import render_packet
from reharness.store.run_store import open_run_dir


@friendly_errors
def packet(
    run: RunDir,
    max_traces: Annotated[int, typer.Option(min=1, help="Most failed episodes to include.")] = 20,
    strategy: Annotated[
        str, typer.Option(help=f"Which failures to show first: {' or '.join(STRATEGIES)}.")
    ] = "round_robin",
    token_budget: Annotated[
        int,
        typer.Option(min=1, help="Approximate token budget (characters / 4); traces beyond it are dropped."),
    ] = 18_000,
    obs_chars: Annotated[
        int, typer.Option(min=1, help="Observations longer than this keep head + tail.")
    ] = 1200,
    reply_chars: Annotated[int, typer.Option(min=1, help="Replies longer than this keep head + tail.")] = 600,
    as_json: Annotated[bool, typer.Option("--json", help="Print the packet as JSON.")] = False,
) -> None:
    """Print the failure packet of a run: its failed episodes, trimmed and masked, with failure codes and
    runtime signals (the same run always gives the same bytes)."""
    store = open_run_dir(run)
    built = extract_packet(
        store.episodes(),
        run_meta=store.read_meta(),
        max_traces=max_traces,
        strategy=strategy.replace("-", "_"),
        token_budget=token_budget,
        obs_chars=obs_chars,
        reply_chars=reply_chars,
    )
    if as_json:
        typer.echo(built.to_json())
    else:
        typer.echo(render_packet(built), nl=False)
