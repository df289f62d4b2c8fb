"""Benchmark: the hf backend's decoding — prompts read in place, replies cut in loops, running batches.

On the same tasks and seeds (``run_batch``, base harness of ``--env``, ``--episodes`` at concurrency
``--concurrency``, the ``train`` split, sampled at the agent's temperature), it runs the episodes with
several settings of one backend, side by side in one process (``--arms``, default ``in-place,loop-stop``):
- ``general``: every prompt read in chunks, each row copied out of the pass's cache and into a compact
  decode cache, the model building its attention mask from the 2-D mask at every decoding step;
- ``in-place``: a read that fits one chunk copies the reused prefixes once into buffers with room, the
  pass writes the new tokens there and decoding continues in the same buffers; each step gets the 4-D
  boolean SDPA mask ready-made;
- ``loop-stop``: as ``in-place``, and a reply that ends in a loop is cut there (``loop_span`` 64, the
  default; :func:`reharness.models.hf_decode.in_loop`) — the episodes change, so compare success too;
- ``running``: as ``loop-stop``, and a finished row is answered at once while waiting requests join the
  running batch (``running_batches``, continuous batching).
Each batch otherwise decodes as a unit. The arms alternate (``--rounds`` rounds, the order rotating each
round) with the prefix cache emptied before each, so warm-up and load fall on all alike. It prints per arm
the wall seconds, episodes/s, seconds in the model and in reading prompts, the mean rows per read, the
success rate, then each arm's speed-up over the first. Trajectories of the arms without a loop stop may
differ in rare sampled tokens: another batch layout sums floats in another order.

Run: ``python benchmarks/bench_decoding.py [--env shop] [--episodes 40] [--concurrency 40] [--arms ...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from reharness.runtime import Harness, RunSpec, base_harness_config
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.executor import run_batch

ARMS = {  # name: (read in place, ready-made SDPA mask, loop span, running batches)
    "general": (False, False, 0, False),
    "in-place": (True, True, 0, False),
    "loop-stop": (True, True, 64, False),
    "running": (True, True, 64, True),
}


def one_arm(agent, spec: RunSpec, arm: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    in_place, sdpa, agent.loop_span, agent.running_batches = ARMS[arm]
    agent.reader.in_place = in_place
    agent._sdpa = sdpa and agent._sdpa_available
    if agent.reader.prefix is not None:
        agent.reader.prefix.clear()
    stats = agent.stats
    model0, prefill0, reads0, requests0 = (
        stats.model_seconds,
        stats.prefill_seconds,
        stats.batches,
        stats.requests,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        result = asyncio.run(
            run_batch(spec, agent, Harness(base_harness_config(spec.env)), out, overwrite=True)
        )
    return {
        "wall": time.perf_counter() - started,
        "model": stats.model_seconds - model0,
        "prefill": stats.prefill_seconds - prefill0,
        "rows": (stats.requests - requests0) / max(1, stats.batches - reads0),
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
    parser.add_argument(
        "--arms", default="in-place,loop-stop", help=f"Comma-separated, among {', '.join(ARMS)}."
    )
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
    names = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in names if a not in ARMS]
    if unknown or not names:
        parser.error(f"--arms: unknown {unknown or names}; choose among {', '.join(ARMS)}")
    arms: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            arms[name].append(one_arm(agent, spec, name))
            got = arms[name][-1]
            print(f"round {round_ + 1} {name:>8}: {got['wall']:.1f} s wall, success {got['success']:.3f}")
    print(f"\n{args.episodes} {args.env} episodes at concurrency {args.concurrency}, {args.rounds} rounds:")
    walls = {}
    for name, runs in arms.items():
        walls[name] = wall = statistics.mean(r["wall"] for r in runs)
        model = statistics.mean(r["model"] for r in runs)
        prefill = statistics.mean(r["prefill"] for r in runs)
        rows = statistics.mean(r["rows"] for r in runs)
        success = statistics.mean(r["success"] for r in runs)
        print(
            f"  {name:>8}: {wall:6.1f} s wall  {args.episodes / wall:5.2f} episodes/s  model {model:5.1f} s"
            f"  reading prompts {prefill:5.1f} s  rows/read {rows:5.1f}  success {success:.3f}"
        )
    for name in names[1:]:
        print(f"  speed-up ({names[0]} / {name}): {walls[names[0]] / walls[name]:.2f}x")


if __name__ == "__main__":
    main()
