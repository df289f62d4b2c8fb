"""Benchmark: one policy-optimisation step with all weights against LoRA adapters (``--lora-rank``).

What a GRPO step spends besides its rollouts is forward + backward + AdamW over the step's rows. This measures
exactly that on a real model (default: SmolLM2-135M-Instruct, ``pretrained:smollm2-135m``, float32 as
``train policy`` trains it): ``--rows`` rows of ``--tokens`` tokens (the tokens of ``--env``'s base
harness, repeated; default: the registry's first built-in environment), arms ``--ranks`` (0: all weights;
R: ``reharness.training.policy_train.lora_config``'s adapters of rank R on every linear layer). Each arm
runs in its own process (so its peak resident memory is its own), the arms interleaved round by round
(``--rounds``), medians reported with each arm's ratio to rank 0: seconds per optimizer step (after one
warm-up step), trainable parameters, peak RSS.

Run: ``python benchmarks/bench_lora_step.py [--agent pretrained:smollm2-135m] [--env ENV] [--ranks 0,8]
[--rows 4] [--tokens 512] [--steps 2] [--rounds 2] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from reharness.envs.registry import BUILTIN_KITS


def one_arm(
    agent: str, env: str, rank: int, rows: int, tokens: int, steps: int, threads: int
) -> dict[str, Any]:
    """Time ``steps`` optimizer steps of one arm in this process."""
    import torch

    from reharness.models.hf_backend import load_model_dir
    from reharness.runtime import Harness
    from reharness.training.policy_config import PolicyTrainConfig
    from reharness.training.policy_train import lora_config, policy_model_dir

    torch.set_num_threads(threads)
    tokenizer, model = load_model_dir(policy_model_dir(agent))
    model.train()
    if rank:
        from peft import get_peft_model

        config = PolicyTrainConfig(env=env, agent=agent, rescue="none", lora_rank=rank, out="-")
        model = get_peft_model(model, lora_config(config))
    text = Harness.base(env).config.model_dump_json()  # any real harness text
    ids = tokenizer(text)["input_ids"]
    ids = (ids * (tokens // max(1, len(ids)) + 1))[:tokens]
    batch = torch.tensor([ids] * rows)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5)

    def step() -> None:
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # warm-up (allocations, AdamW state)
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return {
        "rank": rank,
        "seconds_per_step": statistics.median(times),
        "trainable": sum(p.numel() for p in trainable),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(args: argparse.Namespace) -> None:
    ranks = [int(r) for r in args.ranks.split(",")]
    results: dict[int, list[dict[str, Any]]] = {r: [] for r in ranks}
    for round_ in range(args.rounds):
        order = ranks[round_ % len(ranks) :] + ranks[: round_ % len(ranks)]
        for rank in order:
            command = [sys.executable, __file__, "--arm", str(rank), *_common(args)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results[rank].append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = statistics.median(r["seconds_per_step"] for r in results[ranks[0]])
    base_mem = statistics.median(r["peak_rss_mb"] for r in results[ranks[0]])
    shape = f"{args.rows} rows x {args.tokens} tokens"
    print(f"{args.agent}: {shape}, {args.threads} threads, {args.rounds} round(s)")
    print("| arm | s / step | vs rank 0 | trainable params | peak RSS (MB) | vs rank 0 |")
    print("|---|---|---|---|---|---|")
    for rank in ranks:
        seconds = statistics.median(r["seconds_per_step"] for r in results[rank])
        memory = statistics.median(r["peak_rss_mb"] for r in results[rank])
        name = "all weights" if rank == 0 else f"LoRA r={rank}"
        print(
            f"| {name} | {seconds:.2f} | {seconds / base:.2f}x | {results[rank][0]['trainable']:,} | "
            f"{memory:,.0f} | {memory / base_mem:.2f}x |"
        )


def _common(args: argparse.Namespace) -> list[str]:
    return [
        "--agent", args.agent, "--env", args.env, "--rows", str(args.rows), "--tokens", str(args.tokens),
        "--steps", str(args.steps), "--threads", str(args.threads),
    ]  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agent", default="pretrained:smollm2-135m")
    parser.add_argument("--env", default=next(iter(BUILTIN_KITS)), help="whose base harness gives the tokens")
    parser.add_argument("--ranks", default="0,8")
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--arm", type=int, default=None, help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.arm is not None:
        arm = one_arm(
            parsed.agent, parsed.env, parsed.arm, parsed.rows, parsed.tokens, parsed.steps, parsed.threads
        )
        print(json.dumps(arm))
    else:
        main(parsed)
