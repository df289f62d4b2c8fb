"""Benchmark: the hf backend's micro-batching — episodes/s at concurrency 1 vs 32, time shares, peak memory.

On the same tasks and seeds (``run_batch``, base harness of ``--env``) it prints:
- episodes/s at concurrency 1 and at ``--concurrency`` (default 32), and their ratio (the speed-up that
  micro-batching concurrent episodes into one decoding pass buys), with the mean batch size;
- the share of wall time spent in the model (inside the decoding passes, tokenisation included), in the
  environment (``reset``/``step``, task generation) and in the harness, each measured by timing the calls
  themselves: the harness is the runtime's own work — building the context (``Conversation.messages``,
  ``build_ctx_data``, ``context_digest``), parsing replies (``parse_action``), formatting feedback
  (``feedback_message``, ``Conversation.add_turn``), the hooks (``EpisodeRunner._call_hooks``) and the
  store's writes (``EpisodeWriter._write``); what none of them covers (the event loop, waiting) is printed
  as "other". At concurrency > 1 the model and the env steps run in worker threads while the loop runs the
  harness, so the shares can overlap and need not add up to 100%;
- how often batching changed an action: episodes whose trajectory differs between the two runs, and the
  per-decision rate (divergent decisions / decisions compared up to the first divergence);
- peak resident memory (RSS, sampled every 5 ms) of a ``--memory-episodes`` (default 64) concurrent run,
  above the process's RSS with the model loaded.

The agent is ``--agent`` (e.g. ``tiny:household-S``, ``hf:PATH``); by default ``tiny:household-S`` when it is
available, else the random tiny test model of ``tests/models/tiny_model.py`` (replies are noise and always run
to ``--max-tokens``, so the numbers then measure the machinery, not an agent).

Run: ``python benchmarks/bench_backends.py [--episodes 32] [--agent tiny:household-S] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import reharness.runtime.episode as episode_module
from reharness.core.errors import ConfigError
from reharness.envs import make_env
from reharness.models.hf_backend import HFBackend
from reharness.models.registry import make_backend, resolve_tiny
from reharness.runtime import Harness, RunSpec, base_harness_config, run_batch
from reharness.runtime.context import Conversation
from reharness.runtime.episode import EpisodeRunner
from reharness.store.records import EpisodeRecord
from reharness.store.writer import EpisodeWriter

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class PeakRSS:
    """Samples RSS in a thread; ``peak`` is the maximum seen while active."""

    def __init__(self, every_s: float = 0.005) -> None:
        self.every_s, self.peak, self._stop = every_s, rss_bytes(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.every_s)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


_INHERITED = object()


class CallTimer:
    """Adds up the time spent inside chosen functions, by category (instrumentation for this benchmark).

    ``targets`` maps a category to ``(owner, attribute)`` pairs; each attribute is wrapped for the duration
    (coroutine functions by an async wrapper, so the time includes what they await) and restored on exit.
    The chosen functions never call one another, so no time is counted twice.
    """

    def __init__(self, targets: dict[str, list[tuple[Any, str]]]) -> None:
        self.targets, self.seconds = targets, dict.fromkeys(targets, 0.0)
        self._lock = threading.Lock()  # env steps and store writes run in worker threads
        self._originals: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> CallTimer:
        for category, pairs in self.targets.items():
            for owner, name in pairs:
                own = vars(owner).get(name, _INHERITED)  # a class may inherit the method
                self._originals.append((owner, name, own))
                setattr(owner, name, self._timed(category, getattr(owner, name)))
        return self

    def _add(self, category: str, seconds: float) -> None:
        with self._lock:
            self.seconds[category] += seconds

    def _timed(self, category: str, original: Any) -> Any:
        if asyncio.iscoroutinefunction(original):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self._add(category, time.perf_counter() - started)

            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._add(category, time.perf_counter() - started)

        return timed

    def __exit__(self, *exc: object) -> None:
        for owner, name, own in reversed(self._originals):
            if own is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        self._originals.clear()


def call_targets(env_name: str) -> dict[str, list[tuple[Any, str]]]:
    env_cls = type(make_env(env_name, split="test"))
    return {
        "env": [(env_cls, n) for n in ("reset", "step", "get_task")],
        "harness": [
            (episode_module, "build_ctx_data"),
            (episode_module, "context_digest"),
            (episode_module, "parse_action"),
            (episode_module, "feedback_message"),
            (Conversation, "messages"),
            (Conversation, "add_turn"),
            (EpisodeRunner, "_call_hooks"),
            (EpisodeWriter, "_write"),
        ],
    }


def default_agent(workdir: Path) -> str:
    try:
        resolve_tiny("household-S")
        return "tiny:household-S"
    except ConfigError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "models"))
        from tiny_model import build_tiny_model

        return f"hf:{build_tiny_model(workdir / 'tiny-test-model')}"


def run(
    backend: HFBackend, agent: str, env: str, harness: Harness, n: int, concurrency: int, out: Path
) -> tuple[float, list[EpisodeRecord], dict[str, float]]:
    spec = RunSpec(env=env, agent=agent, split="test", n=n, seed=0, concurrency=concurrency)
    if backend.reader.prefix is not None:
        backend.reader.prefix.clear()  # every run starts cold: no reuse of another run's prompts
    stats = backend.stats
    model_before, prefill_before, batches_before = (
        stats.model_seconds,
        stats.prefill_seconds,
        len(stats.sizes),
    )
    with CallTimer(call_targets(env)) as timer:
        started, cpu_started = time.perf_counter(), time.process_time()
        result = asyncio.run(run_batch(spec, backend, harness, out_dir=out, overwrite=True))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    sizes = stats.sizes[batches_before:]
    model = stats.model_seconds - model_before
    shares = {
        "wall_s": wall,
        "cpu_s": cpu,
        "prefill": (stats.prefill_seconds - prefill_before) / max(model, 1e-9),
        "model": model / wall,
        "env": timer.seconds["env"] / wall,
        "harness": timer.seconds["harness"] / wall,
        "other": max(0.0, wall - model - timer.seconds["env"] - timer.seconds["harness"]) / wall,
        "mean_batch": sum(sizes) / max(1, len(sizes)),
        "decisions": sum(sizes),
    }
    return n / wall, result.episodes, shares


def stats_line(backend: HFBackend) -> str:
    reused, read = backend.reader.reused_tokens, backend.reader.read_tokens
    return f"{reused}/{reused + read} prompt tokens reused ({reused / max(1, reused + read):.0%})"


def divergence(a: list[EpisodeRecord], b: list[EpisodeRecord]) -> tuple[int, float]:
    """(episodes whose actions differ, divergent decisions / decisions compared up to the divergence)."""
    episodes = compared = 0
    for x, y in zip(a, b, strict=True):
        outs_x = [s.output.completion_token_ids if s.output else None for s in x.steps]
        outs_y = [s.output.completion_token_ids if s.output else None for s in y.steps]
        for i, (p, q) in enumerate(zip(outs_x, outs_y, strict=False)):
            if p != q:
                episodes += 1
                compared += i + 1
                break
        else:
            compared += min(len(outs_x), len(outs_y))
            episodes += len(outs_x) != len(outs_y)
    return episodes, episodes / max(1, compared)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agent", default=None, help="tiny:NAME or hf:PATH (default: see above)")
    parser.add_argument("--env", default="household")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--memory-episodes", type=int, default=64)
    parser.add_argument("--step-limit", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--temperature", type=float, default=None, help="default: the harness's (0)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--history-window", type=int, default=None, help="turns kept (default: harness's)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        agent = args.agent or default_agent(work)
        backend = make_backend(agent, max_batch_size=max(args.concurrency, args.memory_episodes))
        assert isinstance(backend, HFBackend), "this benchmark measures the in-process hf backend"
        config = base_harness_config(args.env)
        sampling = config.sampling.model_copy(update={"max_tokens": args.max_tokens})
        if args.temperature is not None:
            sampling = sampling.model_copy(update={"temperature": args.temperature})
        update = {"step_limit": args.step_limit, "sampling": sampling}
        if args.history_window is not None:
            update["history_window"] = args.history_window
        harness = Harness(config.model_copy(update=update))
        print(
            f"agent {agent} on {args.env}: {args.episodes} episodes, step limit {args.step_limit}, "
            f"history window {harness.config.history_window or 'all'}, max_tokens {args.max_tokens}, "
            f"temperature {sampling.temperature}, torch threads {args.threads}"
        )
        base = rss_bytes()  # first, on a fresh backend: the model is loaded, no cache holds anything yet
        with PeakRSS() as peak:
            mem_eps, _, _ = run(
                backend, agent, args.env, harness, args.memory_episodes, args.memory_episodes, work / "mem"
            )
        cached = backend.reader.prefix.bytes if backend.reader.prefix else 0
        print(
            f"peak RSS of a {args.memory_episodes}-episode concurrent run: {peak.peak / 2**20:.0f} MiB "
            f"({(peak.peak - base) / 2**20:+.0f} MiB above the {base / 2**20:.0f} MiB of the process with "
            f"the model loaded; prefix cache at the end {cached / 2**20:.0f} MiB; {mem_eps:.2f} episodes/s)"
        )
        rows = {}
        for concurrency in (1, args.concurrency):
            rows[concurrency] = run(
                backend, agent, args.env, harness, args.episodes, concurrency, work / f"c{concurrency}"
            )
            eps, _, s = rows[concurrency]
            print(
                f"concurrency {concurrency:>3}: {eps:6.2f} episodes/s  wall {s['wall_s']:6.1f}s  "
                f"cpu {s['cpu_s']:6.1f}s  mean batch {s['mean_batch']:4.1f}  decisions {s['decisions']:.0f}  "
                f"model {s['model']:.0%} (reading prompts {s['prefill']:.0%} of it)  env {s['env']:.0%}  "
                f"harness {s['harness']:.0%}  other {s['other']:.0%}"
            )
        one, many = rows[1][2], rows[args.concurrency][2]
        print(
            f"micro-batching speed-up (concurrency {args.concurrency} vs 1): "
            f"{rows[args.concurrency][0] / rows[1][0]:.1f}x by wall time, "
            f"{one['cpu_s'] / many['cpu_s']:.1f}x by CPU time (robust to other load on the machine)"
        )
        print(f"prefix cache over all runs: {stats_line(backend)}")
        changed, rate = divergence(rows[1][1], rows[args.concurrency][1])
        print(
            f"batching changed the trajectory of {changed}/{args.episodes} episodes "
            f"({rate:.2%} of decisions compared)"
        )


if __name__ == "__main__":
    main()
