"""Benchmark: wall time of one engineer GRPO step and the share of it spent in paired reruns.

Collects ``--batches`` household packets of a target (default: the clumsy scripted expert of
``tests/clumsy.py``, whose near-miss commands a patch can fix; or ``--agent SPEC``), trains
the tiny engineer with SFT for ``--sft-steps`` steps, then runs ``--steps`` GRPO steps with ``--k``
completions per packet and prints the wall time per step, the share of it spent in paired reruns, the mean
reward and the share of valid replies per step. The rest of a step is generation (the engineer writes ``k``
replies of up to ``--max-new-tokens`` tokens) and the policy update. Reruns of identical patches are loaded
from the store, so later steps rerun less.

Run: ``python benchmarks/bench_grpo_step.py [--k 4] [--steps 4] [--size S] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default=None, help="Target spec (default: the clumsy scripted expert).")
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--size", default="S", choices=["S", "micro"])
    parser.add_argument("--sft-steps", type=int, default=200)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=1536)
    parser.add_argument("--out", default=None, help="Keep the data and engineers here (default: temporary).")
    args = parser.parse_args()

    from reharness.training.data import Collector, DataConfig
    from reharness.training.grpo import GRPOStageConfig, run_grpo
    from reharness.training.sft import SFTStageConfig, run_sft

    agents = None
    if args.agent is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from clumsy import ClumsySolver

        agents = {"household": ClumsySolver()}
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-grpo-"))
    data = DataConfig(
        envs=["household"], agent=args.agent or "clumsy", train_batches=args.batches, valid_batches=0,
        batch_size=args.batch_size, max_steps=args.max_steps,
    )  # fmt: skip
    asyncio.run(Collector(data, out / "data", agents=agents).run())
    if not (out / "sft" / "engineer.json").is_file():
        sft = SFTStageConfig(
            data=str(out / "data"), out=str(out / "sft"), size=args.size, steps=args.sft_steps,
            max_new_tokens=args.max_new_tokens,
        )  # fmt: skip
        run_sft(sft, progress=lambda *a: None)
    grpo = GRPOStageConfig(
        data=str(out / "data"), sft=str(out / "sft"), out=str(out / "grpo"), k=args.k, steps=args.steps,
        save_steps=args.steps,
    )  # fmt: skip
    summary = run_grpo(grpo, agents=agents, progress=lambda *a: None)
    timing = summary["timing"]
    print(
        json.dumps({"reward_curve": summary["reward_curve"], "valid": summary["valid_frac_curve"], **timing})
    )
    print(
        f"GRPO step: {timing['seconds_per_step']} s (k={args.k}); paired reruns "
        f"{100 * (timing['rerun_share'] or 0):.1f}% of it; the rest is generation and the update"
    )


if __name__ == "__main__":
    main()
