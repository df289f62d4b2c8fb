"""Benchmark: what the hook sandbox costs per call, per agent step, per start and per respawn.

Prints, for one worker with all confinement layers the host offers (the isolation report is printed too):
- per-call latency p50/p99 with a small ``ctx`` (~200 B) and a 10 KB ``ctx``, a no-op hook, blocking
  ``call`` and asyncio ``acall``, and the CPU time one small call costs the host and the worker (wall-clock
  latency on a 2-core machine depends on what else runs; CPU time does not);
- the cost of one agent step with four hooks (the four hook points called in turn, small ``ctx``);
- worker start time (spawn → confined → patch loaded → first reply), respawn time after a timeout
  (SIGKILL + reap + start + first reply, minus the deadline itself) and the idle worker's RSS;
- the in-process mode for comparison (no isolation).

Run: ``python benchmarks/bench_sandbox.py [--calls 5000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from reharness.core.sandbox import process
from reharness.patches.errors import PatchTimeout
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits

NOOP = "def hook(ctx, nb):\n    return None\n"
SPIN = "def hook(ctx, nb):\n    while ctx['spin']:\n        pass\n    return None\n"
POINTS = ("on_init", "before_decision", "before_action", "after_feedback")
SMALL_CTX = {
    "step": 3,
    "max_step": 20,
    "observation": "You are in the middle of a room. Looking around you, you see a desk 1 and a drawer 2.",
    "action": {"tool": "go", "value": "desk 1"},
    "state": {"error_streak": 0, "same_click_count": 1},
}
BIG_CTX = SMALL_CTX | {"history": [f"step {i}: go to desk {i} and look around carefully" for i in range(200)]}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1e6, ordered[int(len(ordered) * 0.99)] * 1e6


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def report(label: str, samples: list[float]) -> None:
    p50, p99 = percentiles(samples)
    print(f"  {label:<38} p50 {p50:8.1f} µs   p99 {p99:8.1f} µs")


async def async_samples(worker: HookWorker, ctx: dict[str, object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        await worker.acall("p", ctx, {})
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    n = args.calls
    small, large = len(json.dumps(SMALL_CTX)), len(json.dumps(BIG_CTX))
    print(f"ctx sizes: small {small} B, large {large} B; {n} calls each")

    with HookWorker({"p": NOOP}) as worker:
        worker.start()
        iso = worker.isolation_report()
        layers = [k for k in ("rlimits", "no_new_privs", "pdeathsig", "landlock", "seccomp") if iso[k]]
        print(
            f"isolation: {iso['isolation']}; layers: {', '.join(layers)}; landlock ABI {iso['landlock_abi']}"
        )
        timed(lambda: worker.call("p", SMALL_CTX, {}), 200)  # warm-up
        print("per call (no-op hook):")
        report("call, small ctx", timed(lambda: worker.call("p", SMALL_CTX, {}), n))
        report("call, 10 KB ctx", timed(lambda: worker.call("p", BIG_CTX, {}), n))
        assert worker.pid is not None
        host0, worker0 = time.process_time(), process.cpu_seconds_used(worker.pid) or 0.0
        timed(lambda: worker.call("p", SMALL_CTX, {}), n)
        host_us = (time.process_time() - host0) / n * 1e6
        worker_us = ((process.cpu_seconds_used(worker.pid) or 0.0) - worker0) / n * 1e6
        print(f"  CPU per small call (load-independent)  host {host_us:6.1f} µs + worker {worker_us:6.1f} µs")
        report("acall, small ctx", asyncio.run(async_samples(worker, SMALL_CTX, n)))
        report("acall, 10 KB ctx", asyncio.run(async_samples(worker, BIG_CTX, n)))

    with HookWorker(dict.fromkeys(POINTS, NOOP)) as worker:
        worker.start()

        def step() -> None:
            nb: dict[str, object] = {}
            for point in POINTS:
                nb = worker.call(point, SMALL_CTX, nb).nb

        timed(step, 100)
        print("per agent step:")
        report("four hooks, small ctx", timed(step, n // 4))

    starts = []
    for _ in range(args.starts):
        with HookWorker({"p": NOOP}) as worker:
            started = time.perf_counter()
            worker.call("p", SMALL_CTX, {})
            starts.append(time.perf_counter() - started)
    limits = SandboxLimits(call_timeout_s=0.1, max_failures=10**6)
    respawns = []
    with HookWorker({"p": SPIN}, limits) as worker:
        worker.call("p", {"spin": False}, {})
        for _ in range(args.starts):
            started = time.perf_counter()
            with contextlib.suppress(PatchTimeout):
                worker.call("p", {"spin": True}, {})
            worker.call("p", {"spin": False}, {})
            respawns.append(time.perf_counter() - started - limits.call_timeout_s)
    with HookWorker({"p": NOOP}) as worker:
        worker.call("p", SMALL_CTX, {})
        status = Path(f"/proc/{worker.pid}/status").read_text()
        rss_kb = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])
    print("worker lifecycle:")
    print(f"  idle worker RSS (default modules)      {rss_kb / 1024:6.1f} MB")
    print(f"  start to first reply                   median {statistics.median(starts) * 1e3:6.1f} ms")
    print(f"  respawn after a timeout (kill+start)   median {statistics.median(respawns) * 1e3:6.1f} ms")

    with HookWorker({"p": NOOP}, SandboxLimits(isolation="inprocess")) as worker:
        print("in-process (no isolation, for comparison):")
        report("call, small ctx", timed(lambda: worker.call("p", SMALL_CTX, {}), n))


if __name__ == "__main__":
    main()
