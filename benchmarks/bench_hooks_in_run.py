"""Benchmark: per-step overhead of four sandboxed hooks inside real ``run`` episodes, against no hooks.

One patch holds four no-op hooks (``on_init``, ``before_decision``, ``before_action``, ``after_feedback``,
each ``return None``), loaded exactly as ``reharness run --patch`` loads it (validated, one sandboxed
worker pool per patch, ``--isolation``). The scripted solver plays ``--episodes`` episodes of ``--env`` at
``--concurrency`` with and without the patch, on the same tasks and seeds (the no-op hooks change nothing,
which the script checks: both arms give the same trajectory digest). The arms alternate order over
``--rounds`` rounds; each round prints both arms' wall time per step, and the summary gives the median
overhead per step and per hook call. Worker start-up is inside the hooked arm's time (workers start on
the first call of each batch and stop at its end, as in ``run``), so it is also printed on its own.

Run: ``python benchmarks/bench_hooks_in_run.py [--env db] [--episodes 200] [--concurrency 8] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from reharness.cli.run_cmd import load_patch_overlays
from reharness.runtime import Harness, RunSpec, SolverAgent, base_harness_config, run_batch

POINTS = ("on_init", "before_decision", "before_action", "after_feedback")
NOOP = "def hook(ctx, nb):\n    return None\n"


def noop_patch(path: Path, env: str) -> Path:
    patch = {
        "schema_version": "reharness-patch-v1",
        "description": "Four no-op hooks: measures what the sandboxed hook machinery costs per step.",
        "env": env,
        "hooks": dict.fromkeys(POINTS, NOOP),
    }
    path.write_text(json.dumps(patch), encoding="utf-8")
    return path


async def timed_batch(spec: RunSpec, harness: Harness, out: Path) -> tuple[float, int, str, list[int]]:
    started = time.perf_counter()
    result = await run_batch(spec, SolverAgent(), harness, out)
    wall = time.perf_counter() - started
    steps = sum(e.num_steps for e in result.episodes)
    # hook calls with the patch: on_init once, then before_decision + before_action on every (policy) step
    # and after_feedback on every step but an episode's last
    calls = sum(1 + 3 * e.num_steps - 1 for e in result.episodes)
    return wall, steps, result.digest, calls


async def main_async(args: argparse.Namespace) -> None:
    config = base_harness_config(args.env)
    spec = RunSpec(
        env=args.env, agent="solver", n=args.episodes, seed=args.seed, concurrency=args.concurrency
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        patch = noop_patch(root / "noop4.json", args.env)
        overlays = load_patch_overlays([patch], args.isolation, args.concurrency)
        arms = {"none": Harness(config), "hooks": Harness(config, overlays)}
        one = spec.model_copy(update={"n": 1, "concurrency": 1})
        start_s, _, _, _ = await timed_batch(one, arms["hooks"], root / "start-hooks")
        base_s, _, _, _ = await timed_batch(one, arms["none"], root / "start-none")
        print(
            f"{args.env}, solver, {args.episodes} episodes at concurrency {args.concurrency}, "
            f"isolation {args.isolation}; one 1-episode batch: hooks {start_s * 1e3:.0f} ms vs none "
            f"{base_s * 1e3:.0f} ms (worker start-up included)"
        )
        print(f"{'round':>5} {'order':>11} {'none µs/step':>13} {'hooks µs/step':>14} {'overhead':>10}")
        overheads, per_call = [], []
        for r in range(args.rounds):
            order = ("none", "hooks") if r % 2 == 0 else ("hooks", "none")
            per_step: dict[str, float] = {}
            walls: dict[str, float] = {}
            digests = set()
            for arm in order:
                wall, steps, digest, calls = await timed_batch(spec, arms[arm], root / f"r{r}-{arm}")
                per_step[arm] = wall / steps * 1e6
                walls[arm] = wall
                digests.add(digest)
            assert len(digests) == 1, "no-op hooks changed the trajectories"
            overhead = per_step["hooks"] - per_step["none"]
            overheads.append(overhead)
            per_call.append((walls["hooks"] - walls["none"]) / calls * 1e6)
            print(
                f"{r:>5} {'>'.join(order):>11} {per_step['none']:>13.0f} {per_step['hooks']:>14.0f} "
                f"{overhead:>+9.0f}µs"
            )
        print(
            f"median overhead of four sandboxed hooks: {statistics.median(overheads):+.0f} µs per step, "
            f"{statistics.median(per_call):+.0f} µs per hook call ({calls} calls a batch), "
            f"at concurrency {args.concurrency}, worker start-up included"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="db")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--isolation", default="standard", choices=("standard", "strict"))
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
