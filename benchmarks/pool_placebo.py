"""How much of a candidate sibling's "rescue" is a real repair, and how much is perturbation noise?

A greedy policy is a deterministic function of its context, so *any* change of the context — even one that
carries no information — moves some tasks from failure to success and others back. This benchmark measures
that floor: H0 and a few **placebo siblings** (harness-config deltas that add a neutral sentence, no
instruction, no new information) run the same `train` tasks and seeds as `reharness pool evolve` does (same
seeded spec, so H0's runs are shared with an evolve of the same `--seed`/`--batch-size` in the same `--out`),
and the benchmark prints each placebo's rescued / broken counts next to the evolve's candidates (from
`OUT/evolve/candidates.jsonl`, when there). A candidate's rescues are evidence of a repair only where they
stand out of the placebo range.

    python benchmarks/pool_placebo.py --env household --agent tiny:household-S --batch-size 30 \\
        --out pool-household        # the directory of a `pool evolve --seed 0 --batch-size 30` run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from reharness.engineer.improve import Events
from reharness.measure.baseline import Target, get_baseline
from reharness.measure.paired import compare
from reharness.pool.evolve import EvolveConfig, batch_spec
from reharness.pool.measure import run_paired
from reharness.pool.placebo import PLACEBOS, placebo_delta
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.harness import base_harness_config


async def main(args: argparse.Namespace) -> dict:
    agent = make_agent(args.agent, max_batch_size=args.concurrency)
    h0 = base_harness_config(args.env)
    runs = Path(args.out) / "evolve" / "runs"
    evolve = EvolveConfig.build(
        env=args.env,
        agent=args.agent,
        batch_size=args.batch_size,
        seed=args.seed,
        concurrency=args.concurrency,
    )
    spec = batch_spec(evolve, "train", args.batch_size, "train")  # the evolve's own train batch
    events = Events()
    started = time.perf_counter()
    try:
        base = await get_baseline(spec, agent, Target(h0), runs)
        rows = []
        for i, (field, text) in enumerate(PLACEBOS[: args.placebos]):
            config = h0.model_copy(update=placebo_delta(field, text, h0.model_dump()))
            records = await run_paired(Target(config).harness(), base, agent, runs, f"placebo {i}", events)
            paired = compare(f"placebo-{i}", base.episodes, records)
            rows.append(
                {"placebo": i, "change": f"{field} += {text!r}", "rescued": len(paired.rescued),
                 "broken": len(paired.broken)}
            )  # fmt: skip
            print(f"placebo {i}: {rows[-1]}", file=sys.stderr, flush=True)
    finally:
        await agent.close()
    candidates = []
    path = Path(args.out) / "evolve" / "candidates.jsonl"
    if path.is_file():
        for line in path.read_text().splitlines():
            c = json.loads(line)
            candidates.append(
                {
                    "id": c["id"],
                    "origin": c["origin"],
                    "rescued": len(c["rescued"]),
                    "broken": len(c["broken"]),
                }
            )
    moved = [r["rescued"] + r["broken"] for r in rows]
    floor = max((r["rescued"] for r in rows), default=0)
    return {
        "env": args.env,
        "agent": args.agent,
        "batch_size": args.batch_size,
        "h0_success": base.result.success_rate,
        "placebos": rows,
        "placebo_rescued_max": floor,
        "placebo_moved_mean": statistics.fmean(moved) if moved else 0.0,
        "candidates": candidates,
        "candidates_above_placebo_max": sum(1 for c in candidates if c["rescued"] > floor),
        "seconds": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="household")
    parser.add_argument("--agent", default="tiny:household-S")
    parser.add_argument("--batch-size", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--placebos", type=int, default=len(PLACEBOS))
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out", default="pool", help="A pool evolve's --out (its H0 runs are reused).")
    result = asyncio.run(main(parser.parse_args()))
    print(json.dumps(result, indent=2))
