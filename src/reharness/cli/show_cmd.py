"""``reharness show`` and ``reharness export``: read a finished (or partial) run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from reharness.cli.common import RunDir, friendly_errors, output_dir, run_dir, stdout
from reharness.cli.show_episode import find_episode, parse_code, print_episode, select_episodes
from reharness.failures.detectors import detect
from reharness.store.parquet import export_parquet
from reharness.store.records import infrastructure_error
from reharness.store.run_store import open_run_dir


@friendly_errors
def show(
    run: RunDir,
    episodes: Annotated[int, typer.Option(min=0, help="Also list the first N episodes.")] = 0,
    failed: Annotated[
        bool, typer.Option("--failed", help="List the failed episodes (all, or the first N).")
    ] = False,
    code: Annotated[
        str | None, typer.Option("--code", help="List the episodes with this failure code (e.g. step_limit).")
    ] = None,
    task: Annotated[
        str | None,
        typer.Option("--task", help="Print the steps of this task's episode (task id or episode #)."),
    ] = None,
) -> None:
    """Print a summary table of a run: success, score and steps by task type, terminations, flags and
    failure codes (recomputed from the trajectories, so older runs show them too). --failed / --code list
    the matching episodes; --task prints one episode step by step."""
    wanted = parse_code(code) if code is not None else None
    store = open_run_dir(run)
    meta = store.read_meta()
    eps = store.episodes()
    if task is not None:
        print_episode(find_episode(eps, task))
        return
    stdout.print(
        f"[bold]{meta.run_id}[/]  env={meta.env}  policy={meta.policy_id}  harness={meta.harness['name']}"
        f" ({meta.harness['id']})  finished {len(eps)}/{meta.n}",
        highlight=False,
    )
    table = Table(title="by task type")
    for col in ("task type", "episodes", "success", "mean score", "mean steps"):
        table.add_column(col, justify="right" if col != "task type" else "left")
    by_type: dict[str, list] = {}
    for e in eps:
        by_type.setdefault(e.task_type, []).append(e)
    for name in sorted(by_type) + ["all"]:
        group = eps if name == "all" else by_type[name]
        if not group:
            continue
        k = len(group)
        table.add_row(
            name,
            str(k),
            f"{sum(e.success for e in group) / k:.1%}",
            f"{sum(e.score for e in group) / k:.3f}",
            f"{sum(e.num_steps for e in group) / k:.1f}",
        )
    stdout.print(table)
    terms = Counter(e.termination for e in eps)
    flags = Counter(f for e in eps for s in e.steps for f in s.flags)
    stdout.print("terminations: " + ", ".join(f"{k}={v}" for k, v in sorted(terms.items())), highlight=False)
    outputs = [s.output for e in eps for s in e.steps if s.output is not None]
    retried = [o for o in outputs if o.attempts > 1]
    if retried:
        retries, waited = sum(o.attempts - 1 for o in retried), sum(sum(o.retry_waits_s) for o in retried)
        stdout.print(
            f"model retries: {len(retried)} of {len(outputs)} replies needed {retries} retries "
            f"({waited:.1f} s waited)",
            highlight=False,
        )
    infra = Counter(infrastructure_error(e) for e in eps)
    if infra["policy"] or infra["env"]:
        stdout.print(
            f"infrastructure errors (not agent failures): policy={infra['policy']}, env={infra['env']} "
            "(rerun the run's command with --retry-errors to run them again)",
            highlight=False,
        )
    stdout.print(
        "step flags: " + (", ".join(f"{k}={v}" for k, v in sorted(flags.items())) or "none"), highlight=False
    )
    codes = Counter(code for e in eps for code in detect(e))
    n_failed = sum(not e.success for e in eps)
    if codes:
        code_table = Table(title=f"failure codes ({n_failed} failed episodes)")
        for col in ("code", "episodes", "share of failed", "meaning"):
            code_table.add_column(col, justify="right" if col in ("episodes", "share of failed") else "left")
        for code in sorted(codes, key=lambda c: (-codes[c], c.value)):
            code_table.add_row(
                code.value, str(codes[code]), f"{codes[code] / n_failed:.0%}", code.description
            )
        stdout.print(code_table)
    else:
        stdout.print("failure codes: none", highlight=False)
    listed = select_episodes(eps, failed, wanted)
    if failed or wanted is not None:
        episodes = episodes or len(listed)
        what = " and ".join(w for w in ("failed" if failed else "", f"code {wanted}" if wanted else "") if w)
        stdout.print(f"{len(listed)} episodes match ({what})", highlight=False)
    if episodes and listed:
        listing = Table(title="episodes")
        for col in ("#", "task", "type", "success", "score", "steps", "termination", "failure codes"):
            listing.add_column(col)
        for e in listed[:episodes]:
            listing.add_row(
                str(e.episode_index),
                e.task_id,
                e.task_type,
                str(e.success),
                f"{e.score:.2f}",
                str(e.num_steps),
                e.termination,
                ", ".join(c.value for c in detect(e)),
            )
        stdout.print(listing)


@friendly_errors
def export(
    run: Annotated[Path, typer.Argument(callback=run_dir, metavar="RUN_DIR", help="A run directory.")],
    dest: Annotated[
        Path | None,
        typer.Option(callback=output_dir, help="Destination folder (default: the run directory)."),
    ] = None,
) -> None:
    """Export a run's episodes and steps to Parquet; print the two paths, one per line."""
    paths = export_parquet(run, dest)
    for p in paths:
        typer.echo(str(p))  # plain lines: rich would fold a long path at the console width
