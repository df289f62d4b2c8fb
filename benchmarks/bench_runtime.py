"""Benchmark: environment steps per second under the solver, and the runtime's per-step overhead.

Prints, for each built-in environment:
- raw env steps/s (``env.step(env.expert_action())`` in a loop, no harness);
- harness steps/s with no overlay and with four no-op hooks (CallableOverlay), measured side by side on the
  same tasks and seeds, and their ratio.

Run: ``python benchmarks/bench_runtime.py [--episodes 100]``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from reharness.envs import make_env
from reharness.runtime import EpisodeRunner, Harness, SolverAgent, noop_overlay


def raw_steps_per_second(name: str, episodes: int) -> tuple[float, int]:
    env = make_env(name, split="test")
    tasks = [env.get_task(i) for i in range(episodes)]  # generation is not part of stepping
    steps = 0
    started = time.perf_counter()
    for i, task in enumerate(tasks):
        env.reset(seed=i, options={"task": task})
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(env.expert_action())
            steps += 1
            done = term or trunc
    return steps / (time.perf_counter() - started), steps


def harness_steps_per_second(name: str, episodes: int, harness: Harness) -> tuple[float, float]:
    env = make_env(name, split="test")
    runner = EpisodeRunner(env, SolverAgent(), harness)
    tasks = [env.get_task(i) for i in range(episodes)]

    async def go() -> tuple[int, int]:
        steps = ok = 0
        for i, task in enumerate(tasks):
            record = await runner.run(task, seed=i, episode_index=i)
            steps += record.num_steps
            ok += record.success
        return steps, ok

    started = time.perf_counter()
    steps, ok = asyncio.run(go())
    return steps / (time.perf_counter() - started), ok / episodes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--envs", nargs="*", default=["household", "shop", "db"])
    args = parser.parse_args()
    print(
        f"{'env':<10} {'raw steps/s':>12} {'harness/s':>10} {'+4 noop/s':>10} {'overhead':>9}"
        f" {'µs/step':>8} {'success':>8}"
    )
    for name in args.envs:
        make_env(name, split="test")  # warm caches (catalogue, tokenizers) outside the timings
        raw, _ = raw_steps_per_second(name, args.episodes)
        base = Harness.base(name)
        hooked = base.with_overlays(noop_overlay())
        plain_runs, hooked_runs = [], []
        for _ in range(args.repeats):  # interleaved, best of N: robust to noise on a shared machine
            plain_sps, ok = harness_steps_per_second(name, args.episodes, base)
            plain_runs.append(plain_sps)
            hooked_runs.append(harness_steps_per_second(name, args.episodes, hooked)[0])
        plain_sps, hooked_sps = max(plain_runs), max(hooked_runs)
        print(
            f"{name:<10} {raw:>12.0f} {plain_sps:>10.0f} {hooked_sps:>10.0f} {plain_sps / hooked_sps:>8.2f}x"
            f" {1e6 / hooked_sps - 1e6 / plain_sps:>8.0f} {ok:>8.0%}"
        )


if __name__ == "__main__":
    main()
