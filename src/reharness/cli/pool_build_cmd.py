"""``reharness pool build``: freeze a pool of siblings the user names (see :mod:`reharness.pool.build`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from reharness.cli.common import StartHarness, check_specs, friendly_errors, output_dir, stderr, stdout
from reharness.cli.pool_evolve_cmd import _pool_spec
from reharness.cli.progress import RichEvents, batch_progress


@friendly_errors
def build_command(
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    agent: Annotated[str, typer.Option(help="The policy the pool is for (its profile is measured with it).")],
    sibling: Annotated[
        list[str],
        typer.Option(
            "--sibling",
            help="DIRECTION=OPERATOR[+OPERATOR…] or DIRECTION=PATCH_FILE; repeat for each sibling.",
        ),
    ],
    out: Annotated[Path, typer.Option(callback=output_dir, help="Pool directory to write.")],
    directions: Annotated[
        str | None, typer.Option(help="A directions YAML file adding to the built-in directions.")
    ] = None,
    harness: StartHarness = None,
    profile: Annotated[
        bool, typer.Option(help="Measure the behaviour profile on `valid` tasks (the router's evidence).")
    ] = True,
    valid_n: Annotated[int, typer.Option(min=1, help="Valid tasks the profile is measured on.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of the profile's tasks and episodes.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes run concurrently.")] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Freeze a pool of hand-picked siblings (no evolution): for an environment where no repair lifts the
    greedy policy but sampled groups may still be rescued (e.g. hint-giving siblings on db)."""
    from reharness.envs.registry import resolve_env_name
    from reharness.pool.build import build_pool
    from reharness.pool.measure import measure_pool_profile
    from reharness.pool.policy_ref import policy_ref
    from reharness.runtime.agent_specs import make_agent
    from reharness.runtime.harness import start_harness_config

    check_specs([env], agents=[agent])
    h0 = start_harness_config(harness, resolve_env_name(env).name)
    policy = make_agent(agent, notify=stderr.print)
    progress = batch_progress(transient=as_json)

    async def go() -> tuple[Any, Any]:
        try:
            pool = build_pool(env, sibling, policy_ref(agent, policy), directions, h0)
            pool.save(out)
            (out / "profile.json").unlink(missing_ok=True)  # a profile left there belongs to another pool
            if not profile:
                return pool, None
            spec = _pool_spec(pool, agent, "valid", valid_n, seed, concurrency)
            runs = out / "build" / "runs"
            return pool, await measure_pool_profile(pool, policy, spec, runs, RichEvents(progress))
        finally:
            await policy.close()

    with progress:
        pool, measured = asyncio.run(go())
    if measured is not None:
        measured.save(pool)
    summary = {
        "pool": str(out),
        "env": pool.env,
        "h0": pool.h0_identity,
        "siblings": [{"id": s.id, "name": s.name, "direction": s.direction} for s in pool.siblings],
        "profile": str(out / "profile.json") if measured is not None else None,
    }
    if as_json:
        print(json.dumps(summary))
        return
    names = ", ".join(f"{s.name} ({s.id[:8]})" for s in pool.siblings)
    stdout.print(f"pool {out}: env {pool.env}, {len(pool.siblings)} sibling(s): {names}", highlight=False)
    stdout.print(
        "profile measured on valid tasks; inspect with `reharness pool show`"
        if measured is not None
        else "no profile (--no-profile): the router falls back to its prior until `reharness pool reanchor`",
        highlight=False,
    )
