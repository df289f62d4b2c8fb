"""Where a policy-training step's time goes, and how fast rollouts run inside training.

Part 1 runs `reharness train policy` (the library call) for a few steps and prints, per step, the wall time of
H0 rollouts, rescue rollouts and the optimisation (from `metrics.jsonl`). Part 2 measures rollout episodes per
second inside training (H0 rollouts of the first step: K samples per task at the training temperature) against
a plain `reharness run` of the same policy on as many train episodes at the same concurrency (greedy, one
episode per task: what `run` does), side by side in one process.

    python benchmarks/bench_policy_step.py --env household --pool docs/results/pool-household --steps 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from reharness.runtime.agent_specs import make_agent
from reharness.runtime.executor import RunSpec, run_batch
from reharness.runtime.harness import Harness
from reharness.training.policy_config import PolicyTrainConfig
from reharness.training.policy_train import train_policy


def main(args: argparse.Namespace) -> None:
    agent = args.agent.replace("{env}", args.env)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "policy"
        config = PolicyTrainConfig(
            env=args.env,
            agent=agent,
            pool=args.pool,
            rescue=args.rescue,
            k=args.k,
            steps=args.steps,
            tasks_per_step=args.tasks_per_step,
            micro_batches=args.micro_batches,
            concurrency=args.concurrency,
            save_steps=args.steps,
            out=str(out),
        )
        started = time.perf_counter()
        train_policy(config)
        total = time.perf_counter() - started
        lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        head = ("step", "H0 rollouts s", "rescue s", "optimise s", "episodes", "rows")
        print(" ".join(f"{h:>{w}}" for h, w in zip(head, (4, 14, 9, 10, 9, 5), strict=True)))
        for m in lines:
            s = m["seconds"]
            episodes = sum(m["costs"]["episodes"].values())
            print(
                f"{m['step']:>4} {s['h0_rollouts']:>14.2f} {s['rescue_rollouts']:>9.2f} "
                f"{s.get('optimisation', 0.0):>10.2f} {episodes:>9} {m['rows']:>5}"
            )
        h0_eps = lines[0]["costs"]["episodes"]["h0"]
        h0_s = lines[0]["seconds"]["h0_rollouts"]
        print(f"total {total:.1f} s for {len(lines)} steps (model load and checkpoints included)")

        async def plain() -> float:
            backend = make_agent(agent, max_batch_size=args.concurrency)
            spec = RunSpec(
                env=args.env, agent=agent, split="train", n=h0_eps, seed=1, concurrency=args.concurrency
            )
            t0 = time.perf_counter()
            await run_batch(spec, backend, Harness.base(args.env), Path(tmp) / "runs")
            seconds = time.perf_counter() - t0
            await backend.close()
            return seconds

        run_s = asyncio.run(plain())
        inside, outside = h0_eps / h0_s, h0_eps / run_s
        print(
            f"rollout episodes/s: inside training {inside:.2f} "
            f"({h0_eps} H0 rollouts, T={config.temperature}), "
            f"plain run {outside:.2f} ({h0_eps} greedy episodes), ratio {inside / outside:.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="household")
    parser.add_argument("--agent", default="tiny:{env}-S")
    parser.add_argument("--pool", default=None)
    parser.add_argument("--rescue", default="router")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    main(parser.parse_args())
