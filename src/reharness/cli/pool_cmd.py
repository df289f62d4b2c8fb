"""``reharness pool``: inspect a frozen sibling pool (``pool show``); evolve/reanchor join this app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reharness.cli.common import friendly_errors, stdout
from reharness.cli.pool_build_cmd import build_command
from reharness.cli.pool_evolve_cmd import eval_command, evolve_command, reanchor_command

pool_app = typer.Typer(
    help="Harness-S sibling pools: inspect, evolve, build, re-anchor.", no_args_is_help=True
)
pool_app.command("evolve")(evolve_command)
pool_app.command("reanchor")(reanchor_command)
pool_app.command("eval")(eval_command)
pool_app.command("build")(build_command)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell_row(key: str, cell: Any) -> list[str]:
    low, high = cell.rescue_ci
    effects = (
        ", ".join(f"{p} {n / cell.observed:.1f}" for p, n in cell.effects.items()) if cell.observed else ""
    )
    return [
        key,
        str(cell.attempts),
        f"{cell.rescues}/{cell.h0_failures}",
        f"{cell.rescue_rate:.2f} [{low:.2f}, {high:.2f}]" if cell.h0_failures else "-",
        f"{cell.breaks}/{cell.attempts - cell.h0_failures}",
        _fmt(cell.invalid_rate),
        _fmt(cell.repeat_rate),
        _fmt(cell.mean_steps, 1),
        effects or "-",
    ]


_CELL_COLUMNS = (
    "",
    "attempts",
    "rescued",
    "rescue rate [95% CI]",
    "broken",
    "invalid",
    "repeat",
    "steps",
    "effects/episode",
)


def _profile_table(title: str, pool: Any, rows: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title)
    table.add_column("sibling")
    for col in _CELL_COLUMNS:
        table.add_column(col or "key", justify="left" if not col else "right")
    for sibling in pool.siblings:
        for key, cell in sorted(rows.get(sibling.id, {}).items()):
            table.add_row(f"{sibling.name} ({sibling.id[:8]})", *_cell_row(key, cell))
    return table


@pool_app.command("show")
@friendly_errors
def show(
    pool_dir: Annotated[Path, typer.Argument(help="A pool directory (pool.json, patches/, profile.json).")],
    log: Annotated[
        Path | None, typer.Option("--log", help="A router decision log (JSONL) to summarise.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
) -> None:
    """Print a pool's siblings, directions, what each sibling changes, its behaviour profile and (with
    --log) routing statistics: decisions, rescue rate per sibling, judge agreement."""
    from reharness.pool import load_pool
    from reharness.pool.decision import read_log
    from reharness.pool.profile import PROFILE_FILE, load_profile, pool_directions
    from reharness.pool.stats import routing_stats

    pool = load_pool(pool_dir)
    profile = load_profile(pool) if (pool_dir / PROFILE_FILE).exists() else None
    stats = routing_stats(read_log(log)) if log is not None else None
    names = {s.id: s.name for s in pool.siblings}
    if as_json:
        out = {
            "pool": str(pool_dir),
            "env": pool.env,
            "h0": pool.h0_identity,
            "policy": pool.policy.model_dump(mode="json"),
            "directions": [d.model_dump(mode="json") for d in pool_directions(pool)],
            "siblings": [
                {
                    "id": s.id,
                    "name": s.name,
                    "direction": s.direction,
                    "description": s.description,
                    "provenance": s.provenance.model_dump(mode="json"),
                    "changes": s.changes(),
                }
                for s in pool.siblings
            ],
            "profile": profile.model_dump(mode="json") if profile else None,
            "routing": stats,
        }
        typer.echo(json.dumps(out, indent=2, sort_keys=True))
        return
    stdout.print(
        f"pool {pool_dir}: env {pool.env}, H0 {pool.h0_identity}, evolved against {pool.policy.spec}, "
        f"{len(pool.siblings)} sibling(s)",
        highlight=False,
    )
    used = {s.direction for s in pool.siblings}
    directions = Table(title="directions")
    for col in ("direction", "failure codes", "siblings", "description"):
        directions.add_column(col)
    for d in pool_directions(pool):  # the pool's own, else the built-in ones its profile is keyed by
        count = sum(s.direction == d.name for s in pool.siblings)
        directions.add_row(d.name, ", ".join(d.codes), str(count) if d.name in used else "-", d.description)
    stdout.print(directions)
    siblings = Table(title="siblings")
    for col in ("id", "name", "direction", "provenance", "changes"):
        siblings.add_column(col)
    for s in pool.siblings:
        p = s.provenance
        siblings.add_row(
            s.id[:8], s.name, s.direction, f"{p.engineer} gen {p.generation}", "\n".join(s.changes())
        )
    stdout.print(siblings)
    if profile is None:
        stdout.print("no profile.json yet (measure one with `reharness pool reanchor`)")
    else:
        stdout.print(
            f"profile: policy {profile.policy.spec} (hash {profile.policy_hash}), split {profile.split}, "
            f"{len(profile.tasks)} task(s), {profile.updates} learned update(s)",
            highlight=False,
        )
        stdout.print(_profile_table("profile by failure cluster (measured)", pool, profile.cells))
        stdout.print(_profile_table("profile by task type (measured)", pool, profile.by_task_type))
        h0 = Table(title="H0 by task type")
        for col in ("task type", "attempts", "success rate", "invalid", "repeat", "steps"):
            h0.add_column(col)
        for kind, cell in sorted(profile.h0.items()):
            h0.add_row(
                kind,
                str(cell.attempts),
                _fmt(cell.success_rate),
                _fmt(cell.invalid_rate),
                _fmt(cell.repeat_rate),
                _fmt(cell.mean_steps, 1),
            )
        stdout.print(h0)
        if profile.learned:
            stdout.print(_profile_table("learned in training, by failure cluster", pool, profile.learned))
    if stats is not None:
        _print_stats(stats, names)


def _print_stats(stats: dict[str, Any], names: dict[str, str]) -> None:
    by = ", ".join(f"{k} {v}" for k, v in stats["by_strategy"].items()) or "none"
    stdout.print(
        f"routing: {stats['decisions']} decision(s) ({by}); "
        f"{stats['groups_rescued']}/{stats['groups_tried']} tried group(s) rescued; "
        f"H0 chosen {stats['h0_picks']}x; {stats['model_calls']} model call(s), "
        f"{stats['tokens']} token(s)",
        highlight=False,
    )
    table = Table(title="routing by sibling")
    for col in ("sibling", "picked first", "attempts", "successes", "rescue rate [95% CI]"):
        table.add_column(col)
    order = {sid: i for i, sid in enumerate(names)}
    for sid, row in sorted(stats["siblings"].items(), key=lambda kv: order.get(kv[0], len(order))):
        rate = (
            "-"
            if row["rescue_rate"] is None
            else (f"{row['rescue_rate']:.2f} [{row['rescue_ci'][0]:.2f}, {row['rescue_ci'][1]:.2f}]")
        )
        table.add_row(
            names.get(sid, sid[:8]),
            str(row["picked_first"]),
            str(row["attempts"]),
            str(row["successes"]),
            rate,
        )
    stdout.print(table)
    if stats["judges"]:
        judges = Table(title="judges")
        for col in ("judge", "votes", "abstained", "agreed with choice", "model calls"):
            judges.add_column(col)
        for name, row in stats["judges"].items():
            judges.add_row(
                name, str(row["votes"]), str(row["abstained"]), _fmt(row["agreement"]), str(row["calls"])
            )
        stdout.print(judges)
        for pair, row in stats["judge_pairs"].items():
            stdout.print(f"judge agreement {pair}: {row['agree']}/{row['both_voted']} ({row['rate']:.2f})")
