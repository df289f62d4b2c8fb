"""``reharness improve`` (the Harness-R1 loop) and ``reharness demo`` (improve with the built-in tiny agent).

Progress goes to stderr (rich); with ``--json`` stdout holds exactly one JSON object,
``{accepted, patch_path, candidates: [{id, valid, delta, rescued, broken}], heldout}``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reharness.cli.common import (
    Device,
    GgufFile,
    RetryErrors,
    StartHarness,
    agent_options,
    friendly_errors,
    output_dir,
    stderr,
    stdout,
)
from reharness.cli.progress import RichEvents, batch_progress
from reharness.cli.scale import Executor, ExecutorKind, RayActors, RayAddress, build_executor, on_executor
from reharness.engineer.factory import ENGINEERS
from reharness.envs.registry import DEMO_AGENT, DEMO_ENV


def _run_improve(
    as_json: bool, executor: ExecutorKind, ray_address: str | None, ray_actors: int | None, **options: Any
) -> Any:
    from reharness.engineer.improve import ImproveConfig, improve

    config = ImproveConfig.build(**options)
    episodes_on = build_executor(executor, ray_address, ray_actors)  # Ray: connected, nothing written yet
    progress = batch_progress(transient=as_json)
    with progress:
        work = improve(config, events=RichEvents(progress), notify=stderr.print)
        return asyncio.run(on_executor(episodes_on, work))


def _print_summary(result: Any) -> None:
    table = Table(title="candidates")
    for col in ("id", "status", "Δ_B", "rescued", "broken", "accepted"):
        table.add_column(col)
    for row in result.candidates:
        accepted = "✔" if row.accepted else ""
        table.add_row(row.id, row.status, f"{row.delta:+.3f}", str(row.rescued), str(row.broken), accepted)
    stdout.print(table)
    _print_heldout(result)
    if result.patch_path:
        stdout.print(f"patch: {result.patch_path}", highlight=False, soft_wrap=True)
    stdout.print(f"report: {Path(result.config.out) / 'report.md'}", highlight=False, soft_wrap=True)


def _print_heldout(result: Any) -> None:
    h = result.heldout
    if h is None:
        stdout.print("no candidate accepted: the harness is unchanged (no held-out evaluation)")
        return
    table = Table(title=f"held-out: {h.n} {result.config.eval_split} tasks, same tasks and seeds")
    for col in ("harness", "success", "mean score"):
        table.add_column(col)
    table.add_row("before (unpatched)", f"{h.baseline_success:.1%}", f"{h.baseline_score:.3f}")
    table.add_row("after (accepted patch)", f"{h.patched_success:.1%}", f"{h.patched_score:.3f}")
    stdout.print(table)
    stdout.print(
        f"success change {h.success_delta:+.3f}, 95% CI [{h.success_ci_low:+.3f}, {h.success_ci_high:+.3f}]; "
        f"rescued {len(h.rescued)}, broken {len(h.broken)}",
        highlight=False,
    )


@friendly_errors
def improve(
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    agent: Annotated[str, typer.Option(help="Frozen target: solver, random, tiny:NAME, hf:PATH, openai:….")],
    engineer: Annotated[str, typer.Option(help=f"Engineer: {ENGINEERS.describe()}.")],
    batch_size: Annotated[int, typer.Option(help="Tasks per round (the batch B).")] = 20,
    batch_split: Annotated[
        str,
        typer.Option(
            help="Split the rounds' batches come from: train, or valid when the target has memorised its "
            "training tasks."
        ),
    ] = "train",
    k: Annotated[int, typer.Option("--k", help="Candidate patches per round.")] = 4,
    rounds: Annotated[
        int, typer.Option(help="Rounds; each starts from the previous accepted harness on new tasks.")
    ] = 1,
    max_regressions: Annotated[
        int, typer.Option(help="Most tasks an accepted patch may break (success → failure) on the batch.")
    ] = 1,
    eval_split: Annotated[str, typer.Option(help="Held-out split for the final comparison.")] = "test",
    eval_n: Annotated[int, typer.Option(help="Held-out tasks.")] = 200,
    seed: Annotated[int, typer.Option(help="Seed: chooses the tasks and seeds every episode.")] = 0,
    out: Annotated[
        Path,
        typer.Option(callback=output_dir, help="Output directory (patch, candidate table, report, runs)."),
    ] = Path("improve"),
    harness: StartHarness = None,
    max_steps: Annotated[
        int | None, typer.Option(help="Step limit per episode (default: the harness's).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Episodes run concurrently per batch.")] = 8,
    no_prefix_reuse: Annotated[
        bool, typer.Option("--no-prefix-reuse", help="Call the model for every step of patched reruns.")
    ] = False,
    retry_errors: RetryErrors = False,
    candidate_timeout: Annotated[
        float,
        typer.Option(
            min=0,
            help="Seconds a candidate's paired rerun may take before it scores 0 as timed out; 0: no limit. "
            "Its finished episodes are kept, so running the same command with a larger limit continues "
            "where it stopped (a slow CPU model may need hours).",
        ),
    ] = 1800.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
    device: Device = None,
    gguf_file: GgufFile = None,
    engineer_prompt: Annotated[
        str | None,
        typer.Option(
            help="Model engineers: full (Harness-R1's prompt) or compact (fits a small context; the only one "
            "for repair programs). Default: full for hook code."
        ),
    ] = None,
    engineer_language: Annotated[
        str | None, typer.Option(help="Model engineers: hooks (free hook code, default) or program.")
    ] = None,
    engineer_constrain: Annotated[
        bool | None,
        typer.Option(
            "--engineer-constrain/--no-engineer-constrain",
            help="Model engineers writing programs: decode under the program grammar (in-process models; "
            "default on for programs).",
        ),
    ] = None,
    engineer_max_tokens: Annotated[
        int | None, typer.Option(help="Model engineers: reply budget in tokens (default 4096).")
    ] = None,
) -> None:
    """Improve a frozen agent's harness: failures → engineer's patches → paired reruns → accept the best
    (Δ_B > 0, ≤ max regressions) → held-out comparison. Writes patch.json, candidates.json/csv, report.md."""
    result = _run_improve(
        as_json,
        executor,
        ray_address,
        ray_actors,
        env=env,
        agent=agent,
        engineer=engineer,
        batch_size=batch_size,
        batch_split=batch_split,
        k=k,
        rounds=rounds,
        max_regressions=max_regressions,
        eval_split=eval_split,
        eval_n=eval_n,
        seed=seed,
        out=str(out),
        harness=None if harness is None else str(harness),
        max_steps=max_steps,
        concurrency=concurrency,
        prefix_reuse=not no_prefix_reuse,
        retry_errors=retry_errors,
        candidate_timeout_s=candidate_timeout or None,
        agent_options=agent_options(agent, device, gguf_file),
        engineer_options={
            "prompt": engineer_prompt,
            "language": engineer_language,
            "constrain": engineer_constrain,
            "max_tokens": engineer_max_tokens,
        },
    )
    if as_json:
        print(json.dumps(result.contract()))
    else:
        _print_summary(result)
    _note_errors(result, retry_errors)


def _note_errors(result: Any, retry_flag: bool) -> None:
    """Tell stderr how many episodes of the whole invocation ended in infrastructure errors."""
    from reharness.cli.infra import note_errors

    rows = [*result.rounds, *result.candidates] + ([result.heldout] if result.heldout else [])
    policy, env = sum(r.policy_errors for r in rows), sum(r.env_errors for r in rows)
    note_errors(policy, env, retried=0, retry_flag=retry_flag, example=None, where=" (all batches)")


@friendly_errors
def demo(
    out: Annotated[Path, typer.Option(callback=output_dir, help="Output directory.")] = Path(
        "reharness-demo"
    ),
    batch_size: Annotated[int, typer.Option(help="Train tasks in the batch.")] = 20,
    k: Annotated[int, typer.Option("--k", help="Candidate patches.")] = 4,
    eval_n: Annotated[int, typer.Option(help="Held-out test tasks.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    agent: Annotated[str, typer.Option(help="Target agent (default: the built-in tiny agent).")] = DEMO_AGENT,
    engineer: Annotated[str, typer.Option(help=f"Engineer: {ENGINEERS.describe()}.")] = "operators",
    max_steps: Annotated[
        int | None, typer.Option(help="Step limit per episode (default: the environment's, 50).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Episodes run concurrently.")] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Improve the demo kit's built-in tiny agent with the repair operators and print the before/after table
    (trains the tiny agent first if it is neither shipped nor cached: up to ~30 minutes on 2 cores)."""
    result = _run_improve(
        as_json,
        ExecutorKind.local,
        None,
        None,
        env=DEMO_ENV,
        agent=agent,
        engineer=engineer,
        batch_size=batch_size,
        k=k,
        rounds=1,
        max_regressions=1,
        eval_split="test",
        eval_n=eval_n,
        seed=seed,
        out=str(out),
        max_steps=max_steps,
        concurrency=concurrency,
    )
    if as_json:
        print(json.dumps(result.contract()))
        return
    _print_summary(result)
