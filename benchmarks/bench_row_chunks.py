"""A policy-training chunk run as one padded batch (TRL's way) against one unpadded row at a time (ours).

Rows are whole episodes: the tiny shop agent's sampled episodes reach ~8,000 tokens. The benchmark builds a
chunk of rows of the given lengths (random tokens, a trained completion on every row), and in a fresh
subprocess per mode runs the DAPO token-mean surrogate's forward and backward on the tiny agent's own model:
``padded`` — the chunk as one batch with its padding mask; ``rows`` —
:func:`reharness.training.row_chunks.split_rows`, one pass per row. It prints the wall time and the
process's peak resident memory of each, their ratio, and both gradient norms (they must agree).

    python benchmarks/bench_row_chunks.py --agent tiny:shop-S --lengths 8000,5000,3000,2000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _chunk(lengths: list[int], completion: int, vocab: int):
    import torch

    g = torch.Generator().manual_seed(0)
    width = max(lengths) - completion
    prompts, masks, comps, cmasks = [], [], [], []
    for n in lengths:
        p = n - completion
        prompts.append(
            torch.cat([torch.zeros(width - p, dtype=torch.long), torch.randint(5, vocab, (p,), generator=g)])
        )
        masks.append(torch.cat([torch.zeros(width - p, dtype=torch.long), torch.ones(p, dtype=torch.long)]))
        comps.append(torch.randint(5, vocab, (completion,), generator=g))
        cmasks.append(torch.ones(completion, dtype=torch.long))
    return {
        "prompt_ids": torch.stack(prompts),
        "prompt_mask": torch.stack(masks),
        "completion_ids": torch.stack(comps),
        "completion_mask": torch.stack(cmasks),
        "tool_mask": torch.stack(cmasks),
        "advantages": torch.linspace(-1.0, 1.0, len(lengths)),
        "num_items_in_batch": torch.tensor(completion * len(lengths)),
    }


def _loss(model, chunk):
    import torch

    ids = torch.cat([chunk["prompt_ids"], chunk["completion_ids"]], dim=1)
    mask = torch.cat([chunk["prompt_mask"], chunk["completion_mask"]], dim=1)
    width = chunk["completion_ids"].size(1)
    logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=width + 1).logits[:, :-1, :]
    logps = torch.log_softmax(logits, dim=-1).gather(-1, chunk["completion_ids"][..., None]).squeeze(-1)
    trained = chunk["completion_mask"] * chunk["tool_mask"]
    return -(chunk["advantages"][:, None] * logps * trained).sum() / chunk["num_items_in_batch"]


def child(mode: str, agent: str, lengths: list[int], completion: int) -> None:
    import torch

    from reharness.models.hf_backend import load_model_dir
    from reharness.training.policy_train import policy_model_dir
    from reharness.training.row_chunks import split_rows

    _, model = load_model_dir(policy_model_dir(agent))
    model.train()
    chunk = _chunk(lengths, completion, int(model.config.vocab_size))
    started = time.perf_counter()
    parts = [chunk] if mode == "padded" else (split_rows(chunk) or [])
    for part in parts:
        _loss(model, part).backward()
    seconds = time.perf_counter() - started
    norm = float(
        torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters() if p.grad is not None))
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB → GB
    print(json.dumps({"mode": mode, "seconds": seconds, "peak_gb": peak, "grad_norm": norm}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="tiny:shop-S")
    parser.add_argument("--lengths", default="8000,5000,3000,2000", help="Row lengths in tokens.")
    parser.add_argument("--completion", type=int, default=1500, help="Completion tokens per row.")
    parser.add_argument("--child", choices=["padded", "rows"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    if args.child:
        child(args.child, args.agent, lengths, args.completion)
        return
    results = {}
    for mode in ("rows", "padded"):
        cmd = [sys.executable, __file__, "--child", mode, "--agent", args.agent, "--lengths", args.lengths]
        out = subprocess.run(cmd + ["--completion", str(args.completion)], capture_output=True, text=True)
        if out.returncode != 0:
            results[mode] = {"mode": mode, "error": f"exit {out.returncode} (killed for memory?)"}
        else:
            results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(results[mode]), flush=True)
    rows, padded = results["rows"], results["padded"]
    if "error" not in rows and "error" not in padded:
        print(
            f"rows of {args.lengths} tokens: padded {padded['seconds']:.1f} s, {padded['peak_gb']:.2f} GB; "
            f"one row at a time {rows['seconds']:.1f} s, {rows['peak_gb']:.2f} GB "
            f"({padded['seconds'] / rows['seconds']:.1f}x faster, "
            f"{padded['peak_gb'] / rows['peak_gb']:.1f}x less memory); "
            f"gradient norms {padded['grad_norm']:.6f} / {rows['grad_norm']:.6f}"
        )


if __name__ == "__main__":
    main()
