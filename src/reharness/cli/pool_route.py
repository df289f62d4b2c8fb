"""``run --pool POOL --route rank1|oracle``: build the per-task harness route of a routed run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from reharness.core.errors import ConfigError

ROUTES = ("rank1", "oracle")

Rank1Prior = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        help="Rank-1: how many tasks' weight the sibling's pool-wide gain has against a task type's own "
        "validation evidence (default 10; 0: per-type evidence only).",
    ),
]


def check_pool_options(pool: Path | None, route: str | None, harness: Path | None, patch: list[Path]) -> None:
    """Refuse combinations that have no meaning before anything runs."""
    if route is not None and pool is None:
        raise ConfigError("--route needs --pool", hint="pass --pool POOL (a directory made by `pool evolve`)")
    if pool is None:
        return
    if (route or "rank1") not in ROUTES:
        raise ConfigError(f"--route must be rank1 or oracle, not {route!r}", hint="use --route rank1")
    if harness is not None or patch:
        raise ConfigError(
            "--pool routes among H0 and the pool's siblings; it cannot be combined with --harness or --patch",
            hint="drop --harness/--patch (a sibling already is H0 + its delta + its patches)",
        )


async def build_route(
    pool_dir: Path, route: str, spec: Any, policy: Any, out: Path, rank1_prior: float | None = None
) -> Any:
    """The per-task harness route of a routed run of ``spec`` (its ``pool`` holds H0)."""
    from reharness.pool.measure import run_pool
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import load_profile
    from reharness.pool.routed_run import OracleRoute, Rank1Route, oracle_choices
    from reharness.pool.router import RANK1_PRIOR

    pool = load_pool(pool_dir)
    if pool.env != spec.env:
        raise ConfigError(
            f"pool {pool_dir} is for env {pool.env!r}, the run is for {spec.env!r}",
            hint=f"use --env {pool.env} or a pool evolved for {spec.env}",
        )
    workers = min(8, spec.concurrency)
    if route == "oracle":
        h0, siblings = await run_pool(pool, policy, spec, out / "oracle-runs")
        return OracleRoute(pool, oracle_choices(pool, h0, siblings), max_workers=workers)
    prior = RANK1_PRIOR if rank1_prior is None else rank1_prior
    return Rank1Route(pool, load_profile(pool), rank1_prior=prior, max_workers=workers)
