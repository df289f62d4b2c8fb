"""Benchmark: what the ``r1`` dialect costs next to reharness's own, measured side by side in one run.

For each benchmark env, solver episodes (same tasks, same seeds) run with no overlay, with a no-op patch of
four hooks in the ``reharness`` dialect and with the same no-op patch in the ``r1`` dialect (official ctx
built per hook call, Harness-R1's dict-subclass view and line budget in the worker). Prints the mean wall
time per step of each and the r1 ctx-builder time per call (host side, no sandbox).

Run: ``python benchmarks/bench_r1_dialect.py [--episodes 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from reharness.envs.registry import make_env
from reharness.patches.model import Patch
from reharness.patches.overlay import PatchOverlay
from reharness.runtime.agents import SolverAgent
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness, base_harness_config
from reharness.runtime.r1.adapter import Proposal, make_adapter

NOOP = "def hook(ctx, nb):\n    return None\n"
HOOKS = ("on_init", "make_pre_hint", "on_before_action", "on_post_step")


async def episodes(env_name: str, dialect: str | None, n: int) -> tuple[float, int]:
    env = make_env(env_name, split="test")
    overlays = (
        []
        if dialect is None
        else [PatchOverlay(Patch(dict.fromkeys(HOOKS, NOOP), "noop", env_name, {}, dialect))]
    )
    runner = EpisodeRunner(env, SolverAgent(), Harness(base_harness_config(env_name), overlays))
    await runner.run(env.get_task(0), seed=0)  # warm-up: worker start, caches
    started, steps = time.perf_counter(), 0
    for i in range(n):
        record = await runner.run(env.get_task(i), seed=i)
        steps += record.num_steps
    elapsed = time.perf_counter() - started
    for overlay in overlays:
        await overlay.close()
    return elapsed, steps


def ctx_cost(env_name: str, calls: int = 2000) -> float:
    env = make_env(env_name, split="test")
    observation, info = env.reset(seed=0, options={"task": env.get_task(0)})
    adapter = make_adapter(env, env.max_steps)
    adapter.reset(observation, info)
    action = env.expert_action()
    started = time.perf_counter()
    for i in range(calls):
        adapter.ctx(HOOKS[i % 4], 1, Proposal(action, action, action))
    return (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10)
    args = parser.parse_args()
    print(f"solver episodes per variant: {args.episodes} (same tasks and seeds)")
    print(f"{'env':<10} {'no patch':>14} {'reharness no-op':>17} {'r1 no-op':>14} {'r1 ctx build':>14}")
    for env_name in ("household", "shop", "db"):
        row = []
        for dialect in (None, "reharness", "r1"):
            elapsed, steps = asyncio.run(episodes(env_name, dialect, args.episodes))
            row.append(f"{elapsed / max(steps, 1) * 1e3:9.2f} ms/st")
        print(f"{env_name:<10} {row[0]:>14} {row[1]:>17} {row[2]:>14} {ctx_cost(env_name) * 1e6:10.1f} µs")


if __name__ == "__main__":
    main()
