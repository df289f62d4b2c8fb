"""``reharness run``: run a batch of episodes with a progress bar and print or show a summary.

The summary counts the episodes that ended in infrastructure errors (``policy_errors``, ``env_errors``) and
the model requests that got a valid reply; a run in which none did exits with status 3 (after printing the
summary, also with ``--json``). See :mod:`reharness.cli.infra`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from reharness.cli.common import (
    Device,
    GgufFile,
    Isolation,
    RetryErrors,
    agent_options,
    build_options,
    friendly_errors,
    input_file,
    output_dir,
    stderr,
    stdout,
)
from reharness.cli.infra import note_errors
from reharness.cli.pool_route import Rank1Prior, build_route, check_pool_options
from reharness.cli.progress import time_columns
from reharness.cli.scale import Executor, ExecutorKind, RayActors, RayAddress, build_executor, close_executor
from reharness.core.secrets import redact
from reharness.envs.registry import get_kit, resolve_env_name
from reharness.failures.detectors import failure_codes
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.agents import GoldAgent
from reharness.runtime.executor import BatchResult, RunSpec, run_resolved
from reharness.runtime.harness import Harness, start_harness_config
from reharness.runtime.resolved import resolve_run
from reharness.store.records import first_infrastructure_error


def load_patch_overlays(
    paths: list[Path], isolation: str, concurrency: int, dialect: str | None = None, env: str | None = None
) -> list[Any]:
    """Load, validate and wrap patches as sandboxed overlays (clear error listing every problem); a patch
    written for another environment than ``env`` is refused.

    ``dialect`` (``reharness`` or ``r1``) overrides each document's own (``--dialect``).
    """
    if not paths:
        return []
    from reharness.core.errors import ConfigError
    from reharness.patches.model import load_patch
    from reharness.patches.overlay import PatchOverlay
    from reharness.patches.sandbox.supervisor import SandboxLimits
    from reharness.patches.validate import validate_patch

    overlays = []  # (--isolation is an Isolation choice, checked when the command line is read)
    for path in paths:
        patch = load_patch(path, dialect=dialect)
        # a patch names the env it was written for; an r1 patch always needs one (its ctx is per benchmark)
        if env is not None and patch.env != env and (patch.env is not None or patch.dialect == "r1"):
            kind = "a Harness-R1 patch" if patch.dialect == "r1" else "a patch"
            raise ConfigError(
                f"--patch {path} is {kind} for env {patch.env!r}, but the run is for {env!r}",
                hint=f"use --env {patch.env}, or a patch for {env}"
                + ("" if patch.dialect == "r1" else f" (its env field {env!r} or absent)"),
            )
        errors = validate_patch(patch)
        if errors:
            listing = "; ".join(
                f"{e.hook or 'patch'}:{e.line}:{e.col} [{e.rule}] {e.message}" for e in errors[:5]
            )
            raise ConfigError(
                f"patch {path} is invalid: {listing}", hint=f"run `reharness patch check {path}`"
            )
        overlays.append(
            PatchOverlay(
                patch, SandboxLimits(isolation=cast(Any, isolation)), max_workers=min(concurrency, 8)
            )
        )
    return overlays


@friendly_errors
def run(
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    agent: Annotated[
        str, typer.Option(help="Policy: solver, random, gold, openai:MODEL@URL, hf:PATH or tiny:NAME.")
    ] = "solver",
    split: Annotated[str, typer.Option(help="Task split: train, valid or test.")] = "test",
    n: Annotated[
        int | None, typer.Option(min=1, help="Number of episodes (default: 50, or all tasks of --data).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Run seed: chooses the tasks and seeds every episode.")] = 0,
    data: Annotated[
        Path | None,
        typer.Option(
            callback=input_file,
            help="Real task file, read by the kit's --data loader (docs/environments.md says which kits "
            "have one and the formats).",
        ),
    ] = None,
    harness: Annotated[
        Path | None, typer.Option(callback=input_file, help="Harness YAML (fields override the env's base).")
    ] = None,
    patch: Annotated[
        list[Path] | None,
        typer.Option(callback=input_file, help="Patch file installed as an overlay (repeatable, in order)."),
    ] = None,
    isolation: Annotated[
        Isolation, typer.Option(help="Sandbox for patch code: standard or strict.")
    ] = Isolation.standard,
    dialect: Annotated[
        str | None,
        typer.Option(help="Read --patch files as reharness or r1 (Harness-R1 ctx); default: from each file."),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=1024, help="Episodes run concurrently.")] = 8,
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Root directory of runs (the run goes in OUT/RUN_ID).")
    ] = Path("runs"),
    overwrite: Annotated[bool, typer.Option(help="Replace an existing run with the same id.")] = False,
    retry_errors: RetryErrors = False,
    device: Device = None,
    gguf_file: GgufFile = None,
    pool: Annotated[
        Path | None,
        typer.Option(help="Sibling pool (made by `pool evolve`): route each task to one harness."),
    ] = None,
    route: Annotated[
        str | None, typer.Option(help="With --pool: rank1 (one harness per task, n rollouts) or oracle.")
    ] = None,
    rank1_prior: Rank1Prior = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary object on stdout.")] = False,
    no_train: Annotated[
        bool,
        typer.Option(
            "--no-train", help="Fail (with the training command) instead of training a missing tiny agent."
        ),
    ] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Run a batch of episodes (resumes an interrupted run with the same options).

    Exits with status 3 when no model request of the run got a valid reply (server down, bad key, ...).
    """
    env_name = resolve_env_name(env).name
    check_pool_options(pool, route, harness, patch or [])
    config = start_harness_config(harness, env_name)
    options = agent_options(agent, device, gguf_file)
    spec = build_options(
        RunSpec,
        "reharness run",
        env=env_name,
        agent=agent,
        split=split,
        n=n,
        seed=seed,
        data=str(data) if data else None,
        concurrency=concurrency,
        agent_options=options,
    )
    overlays = load_patch_overlays(
        patch or [], isolation.value, concurrency, dialect, env_name
    )  # before any model
    # a bad task file, split, --n or agent for the env is reported before a progress bar starts
    resolved = resolve_run(spec, Harness(config, overlays))  # the tasks, chosen once for the whole run
    try:
        policy = make_agent(agent, train_missing=not no_train, notify=stderr.print, **options)
        if isinstance(policy, GoldAgent):
            policy.check_env(resolved.planning_env())
    except BaseException:
        resolved.close()
        raise
    episodes_on = build_executor(executor, ray_address, ray_actors)  # Ray: connected, nothing written yet
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        *time_columns(),
        console=stderr,
        transient=as_json,
    )
    counts = {"done": 0, "ok": 0}
    with progress:
        bar = progress.add_task(f"{env_name}/{agent}", total=None, rate="-")

        def on_start(total: int, finished: int) -> None:
            progress.update(bar, total=total, completed=finished)
            if finished:
                stderr.print(f"resuming: {finished}/{total} episodes already finished")

        def on_episode(record) -> None:  # type: ignore[no-untyped-def]
            counts["done"] += 1
            counts["ok"] += int(record.success)
            progress.update(bar, advance=1, rate=f"{counts['ok'] / counts['done']:.0%}")

        routing: dict[str, Any] = {}

        async def go() -> BatchResult:
            try:
                batch, chosen = resolved, None
                if pool is not None:
                    chosen = await build_route(pool, route or "rank1", spec, policy, out, rank1_prior)
                    batch = resolved.with_harness(Harness(chosen.pool.h0))
                result = await run_resolved(
                    batch,
                    policy,
                    out,
                    overwrite,
                    on_start,
                    on_episode,
                    annotate=failure_codes,
                    retry_errors=retry_errors,
                    route=chosen,
                    executor=episodes_on,
                )
                if chosen is not None:
                    routing["routing"] = chosen.routing(result.episodes)
                    routing["rollouts"] = chosen.rollouts_per_task * len(result.episodes)
                return result
            finally:
                resolved.close()  # the planning env, unless the run took it
                await close_executor(episodes_on)  # Ray actors (their envs, sandbox workers, models)
                await policy.close()  # HTTP pools, model worker threads

        result = asyncio.run(go())
    summary = {
        "run_id": result.run_id,
        "env": env_name,
        "agent": agent,
        "n": len(result.episodes),
        "success_rate": round(result.success_rate, 6),
        "mean_score": round(result.mean_score, 6),
        "mean_steps": round(result.mean_steps, 4),
        "trajectory_digest": result.digest,
        "out": result.out,
    }
    summary |= get_kit(env_name).run_metrics([(e.task_id, e.success) for e in result.episodes])
    if routing:
        summary |= {"route": route or "rank1", **routing}
    errors = result.infrastructure_errors()
    requests, valid = result.model_replies()
    summary |= {
        "policy_errors": errors["policy"],
        "env_errors": errors["env"],
        "retried_errors": result.retried,
        "model_requests": requests,
        "valid_replies": valid,
    }
    if as_json:
        print(redact(json.dumps(summary)))
    else:
        for key, value in summary.items():
            stdout.print(f"{key:>18}: {redact(str(value))}", highlight=False, soft_wrap=True)
    note_errors(
        errors["policy"],
        errors["env"],
        retried=result.retried,
        retry_flag=retry_errors,
        example=first_infrastructure_error(result.episodes),
    )
    result.require_replies("this run")  # exit status 3 through the error boundary, after the summary
