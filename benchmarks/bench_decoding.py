"""Benchmark: the hf backend's decoding passes — prompts read in place and ready-made step masks.

On the same tasks and seeds (``run_batch``, base harness of ``--env``, ``--episodes`` at concurrency
``--concurrency``, the ``train`` split, sampled at the agent's temperature), it runs the episodes with two
settings of one backend, side by side in one process:
- ``general``: every prompt read in chunks, each row copied out of the pass's cache and into a compact
  decode cache, the model building its attention mask from the 2-D mask at every decoding step (how the
  backend worked before);
- ``in place``: a read that fits one chunk copies the reused prefixes once into buffers with room, the pass
  writes the new tokens there and decoding continues in the same buffers; each step gets the 4-D boolean
  SDPA mask ready-made.
The arms alternate (``--rounds`` rounds, the order flipping each round) with the prefix cache emptied before
each, so warm-up and load fall on both alike. It prints per arm the wall seconds, episodes/s, seconds in the
model and in reading prompts, and the success rate, then the speed-up (general wall / in-place wall).
Trajectories may differ in rare sampled tokens: another cache layout sums floats in another order.

Run: ``python benchmarks/bench_decoding.py [--env household] [--episodes 40] [--concurrency 40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from reharness.models.registry import make_agent
from reharness.runtime import Harness, RunSpec, base_harness_config
from reharness.runtime.executor import run_batch


def one_arm(agent, spec: RunSpec, in_place: bool) -> dict[str, float]:  # type: ignore[no-untyped-def]
    agent.reader.in_place = in_place
    agent._sdpa = in_place and agent._sdpa_available
    if agent.reader.prefix is not None:
        agent.reader.prefix.clear()
    model0, prefill0 = agent.stats.model_seconds, agent.stats.prefill_seconds
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        result = asyncio.run(
            run_batch(spec, agent, Harness(base_harness_config(spec.env)), out, overwrite=True)
        )
    return {
        "wall": time.perf_counter() - started,
        "model": agent.stats.model_seconds - model0,
        "prefill": agent.stats.prefill_seconds - prefill0,
        "success": result.success_rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="household")
    parser.add_argument("--agent", default=None, help="Agent spec (default tiny:ENV-S).")
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec_text = args.agent or f"tiny:{args.env}-S"
    agent = make_agent(spec_text)
    agent._sdpa_available = agent._sdpa
    spec = RunSpec(
        env=args.env,
        agent=spec_text,
        split="train",
        n=args.episodes,
        seed=args.seed,
        concurrency=args.concurrency,
    )
    arms: dict[str, list[dict[str, float]]] = {"general": [], "in place": []}
    for round_ in range(args.rounds):
        order = ["general", "in place"] if round_ % 2 == 0 else ["in place", "general"]
        for name in order:
            arms[name].append(one_arm(agent, spec, name == "in place"))
            got = arms[name][-1]
            print(f"round {round_ + 1} {name:>8}: {got['wall']:.1f} s wall, success {got['success']:.3f}")
    print(f"\n{args.episodes} {args.env} episodes at concurrency {args.concurrency}, {args.rounds} rounds:")
    for name, runs in arms.items():
        wall = statistics.mean(r["wall"] for r in runs)
        model = statistics.mean(r["model"] for r in runs)
        prefill = statistics.mean(r["prefill"] for r in runs)
        success = statistics.mean(r["success"] for r in runs)
        print(
            f"  {name:>8}: {wall:6.1f} s wall  {args.episodes / wall:5.2f} episodes/s  model {model:5.1f} s"
            f"  reading prompts {prefill:5.1f} s  success {success:.3f}"
        )
    general = statistics.mean(r["wall"] for r in arms["general"])
    in_place = statistics.mean(r["wall"] for r in arms["in place"])
    print(f"  speed-up (general / in place): {general / in_place:.2f}x")


if __name__ == "__main__":
    main()
