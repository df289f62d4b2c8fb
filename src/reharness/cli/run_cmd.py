"""``reharness run``: run a batch of episodes with a progress bar and print or show a summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reharness.cli.common import friendly_errors, stderr, stdout
from reharness.envs.registry import resolve_env_name
from reharness.failures.detectors import failure_codes
from reharness.runtime.agents import make_agent
from reharness.runtime.executor import BatchResult, RunSpec, run_batch
from reharness.runtime.harness import Harness, base_harness_config, load_harness_config


def load_patch_overlays(
    paths: list[Path], isolation: str, concurrency: int, dialect: str | None = None, env: str | None = None
) -> list[Any]:
    """Load, validate and wrap patches as sandboxed overlays (clear error listing every problem).

    ``dialect`` (``reharness`` or ``r1``) overrides each document's own (``--dialect``).
    """
    if not paths:
        return []
    from reharness.core.errors import ConfigError
    from reharness.patches.model import load_patch
    from reharness.patches.overlay import PatchOverlay
    from reharness.patches.sandbox.supervisor import SandboxLimits
    from reharness.patches.validate import validate_patch

    if isolation not in ("standard", "strict"):
        raise ConfigError(f"--isolation must be standard or strict, not {isolation!r}")
    overlays = []
    for path in paths:
        patch = load_patch(path, dialect=dialect)
        if patch.dialect == "r1" and env is not None and patch.env != env:
            raise ConfigError(
                f"patch {path} is a Harness-R1 patch for {patch.env!r}; its ctx does not exist on {env!r}",
                hint=f"run it with --env {patch.env}",
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
    env: Annotated[str, typer.Option(help="Environment: household, shop, db (or a gymnasium id).")],
    agent: Annotated[
        str, typer.Option(help="Policy: solver, random, gold, openai:MODEL@URL, hf:PATH or tiny:NAME.")
    ] = "solver",
    split: Annotated[str, typer.Option(help="Task split: train, valid or test.")] = "test",
    n: Annotated[
        int | None, typer.Option(help="Number of episodes (default: 50, or all tasks of --data).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Run seed: chooses the tasks and seeds every episode.")] = 0,
    data: Annotated[
        Path | None, typer.Option(help="Real task file (db: an AgentBench DBBench .jsonl).")
    ] = None,
    harness: Annotated[
        Path | None, typer.Option(help="Harness YAML (fields override the env's base).")
    ] = None,
    patch: Annotated[
        list[Path] | None, typer.Option(help="Patch file installed as an overlay (repeatable, in order).")
    ] = None,
    isolation: Annotated[str, typer.Option(help="Sandbox for patch code: standard or strict.")] = "standard",
    dialect: Annotated[
        str | None,
        typer.Option(help="Read --patch files as reharness or r1 (Harness-R1 ctx); default: from each file."),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Episodes run concurrently.")] = 8,
    out: Annotated[Path, typer.Option(help="Root directory of runs (the run goes in OUT/RUN_ID).")] = Path(
        "runs"
    ),
    overwrite: Annotated[bool, typer.Option(help="Replace an existing run with the same id.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary object on stdout.")] = False,
    no_train: Annotated[
        bool,
        typer.Option(
            "--no-train", help="Fail (with the training command) instead of training a missing tiny agent."
        ),
    ] = False,
) -> None:
    """Run a batch of episodes (resumes an interrupted run with the same options)."""
    env_name = resolve_env_name(env).name
    config = load_harness_config(harness, env_name) if harness else base_harness_config(env_name)
    spec = RunSpec(
        env=env_name,
        agent=agent,
        split=split,
        n=n,
        seed=seed,
        data=str(data) if data else None,
        concurrency=concurrency,
    )
    policy = make_agent(agent, train_missing=not no_train, notify=stderr.print)
    overlays = load_patch_overlays(patch or [], isolation, concurrency, dialect, env_name)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeElapsedColumn(),
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

        async def go() -> BatchResult:
            try:
                return await run_batch(
                    spec,
                    policy,
                    Harness(config, overlays),
                    out,
                    overwrite,
                    on_start,
                    on_episode,
                    annotate=failure_codes,
                )
            finally:
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
    if as_json:
        print(json.dumps(summary))
    else:
        for key, value in summary.items():
            stdout.print(f"{key:>18}: {value}", highlight=False)
