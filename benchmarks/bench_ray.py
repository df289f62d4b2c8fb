"""Benchmark: episodes per second of ``run`` with the local executor versus the Ray executor (2 actors).

Agents: ``solver`` (the scripted expert: the episode itself costs little, so this measures the executor's
overhead per episode) and ``tiny:household-S`` (a real in-process model: each actor loads it once and
micro-batches its own episodes' requests). Both arms run the same spec, side by side in one process, in
alternating order, ``--repeats`` times; each timed batch goes into a fresh run directory with the CLI's
failure-code annotation. Ray is started once and the actors are warmed up (started, model loaded) by an
untimed batch first: the executor's actors are long-lived, so start-up is paid once per command, and is
reported on its own line. The figure is episodes per second of ``run_batch`` wall time (best of the
repeats); ``ratio`` is ray / local. The digests show that both arms played the same trajectories.

Each arm also reports this process's CPU time per episode (``cpu/ep``, all its threads): for the local
arm that is the whole cost of an episode (play + store); for the Ray arm it is the driver's share
(dispatch, receive, parse, store) while the actors play. From the solver figures it prints the N-machine
scaling curve that ``docs/scale-out.md`` explains: actors play in parallel, one driver stores.

Run: ``python benchmarks/bench_ray.py [--n 200] [--tiny-n 24] [--repeats 2] [--actors 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from reharness.failures import failure_codes
from reharness.runtime import Harness, RunSpec, run_batch
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.dispatch import EpisodeExecutor, LocalExecutor
from reharness.runtime.ray_executor import RayExecutor, RayOptions


async def timed(
    spec: RunSpec, agent: Any, executor: EpisodeExecutor, out: Path, harness: Harness
) -> tuple[float, float, str]:
    """(episodes per second, this process's CPU seconds per episode, digest) of one batch."""
    started, cpu = time.perf_counter(), time.process_time()
    result = await run_batch(spec, agent, harness, out, annotate=failure_codes, executor=executor)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    n = spec.n or 1
    assert len(result.episodes) == n
    return n / elapsed, cpu / n, result.digest


async def compare(
    label: str, env: str, agent_spec: str, n: int, concurrency: int, repeats: int, actors: int, root: Path
) -> dict[str, float]:
    harness = Harness.base(env)
    agent = make_agent(agent_spec, train_missing=False)
    ray_executor = RayExecutor(RayOptions(actors=actors))
    local = LocalExecutor()
    warm = RunSpec(env=env, agent=agent_spec, n=actors * 2, seed=999, concurrency=concurrency)
    started = time.perf_counter()
    await run_batch(warm, agent, harness, root / "warm-ray", executor=ray_executor)
    startup = time.perf_counter() - started
    await run_batch(warm, agent, harness, root / "warm-local", executor=local)
    rates: dict[str, list[float]] = {"local": [], "ray": []}
    cpus: dict[str, list[float]] = {"local": [], "ray": []}
    digests: dict[str, set[str]] = {"local": set(), "ray": set()}
    spec = RunSpec(env=env, agent=agent_spec, n=n, seed=0, concurrency=concurrency)
    for rep in range(repeats):
        order = ("local", "ray") if rep % 2 == 0 else ("ray", "local")
        for arm in order:
            out = root / f"{label}-{arm}-{rep}"
            executor: EpisodeExecutor = local if arm == "local" else ray_executor
            rate, cpu, digest = await timed(spec, agent, executor, out, harness)
            rates[arm].append(rate)
            cpus[arm].append(cpu)
            digests[arm].add(digest)
            shutil.rmtree(out, ignore_errors=True)
    await ray_executor.close()
    await agent.close()
    best = {arm: max(values) for arm, values in rates.items()}
    cpu_ms = {arm: 1000 * min(values) for arm, values in cpus.items()}
    same = digests["local"] == digests["ray"] and len(digests["local"]) == 1
    print(
        f"{label:<22} n={n:<4} conc={concurrency:<3} local {best['local']:8.1f} ep/s   ray({actors}) "
        f"{best['ray']:8.1f} ep/s   ratio {best['ray'] / best['local']:.2f}   same digest: {same}   "
        f"cpu/ep local {cpu_ms['local']:.2f} ms, ray driver {cpu_ms['ray']:.2f} ms   "
        f"(ray start-up + warm-up batch {startup:.1f}s; all: local {_fmt(rates['local'])}, "
        f"ray {_fmt(rates['ray'])})",
        flush=True,
    )
    return best | {
        "startup_s": startup,
        "local_cpu_s": cpu_ms["local"] / 1000,
        "driver_cpu_s": cpu_ms["ray"] / 1000,
    }


def _fmt(values: list[float]) -> str:
    return "/".join(f"{v:.1f}" for v in values)


def simulate(
    title: str,
    actor_rate: float,
    driver_s: float,
    actors_per_machine: int,
    machines: list[int],
    server_rate_per_machine: float | None = None,
) -> None:
    """Predicted episodes/s on N machines: each actor plays ``actor_rate`` episodes/s, the one driver
    dispatches and stores at most ``1 / driver_s`` episodes/s, and (served models) the model servers of
    each machine sustain ``server_rate_per_machine`` episodes/s. The smallest bound wins."""
    print(f"\nscaling simulation, {title}:")
    for n in machines:
        bounds = {"actors": n * actors_per_machine * actor_rate, "driver": 1 / driver_s}
        if server_rate_per_machine is not None:
            bounds["model servers"] = n * server_rate_per_machine
        limit = min(bounds, key=bounds.__getitem__)
        print(f"  {n:>4} machines: {bounds[limit]:10.1f} ep/s  ({limit}-bound)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="solver episodes per timed batch")
    parser.add_argument("--tiny-n", type=int, default=24, help="tiny:household-S episodes per timed batch")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--no-tiny", action="store_true")
    parser.add_argument("--no-solver", action="store_true", help="only the tiny agent (no simulation)")
    args = parser.parse_args()
    import ray

    ray.init(include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    print(f"ray {ray.__version__}, {os.cpu_count()} CPUs visible, load average {os.getloadavg()[0]:.2f}")
    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        solver: dict[str, float] = {}
        if not args.no_solver:
            solver = await compare(
                "household/solver",
                "household",
                "solver",
                args.n,
                args.concurrency,
                args.repeats,
                args.actors,
                root,
            )
            await compare(
                "db/solver", "db", "solver", args.n, args.concurrency, args.repeats, args.actors, root
            )
        if not args.no_tiny:
            await compare(
                "household/tiny-S",
                "household",
                "tiny:household-S",
                args.tiny_n,
                args.concurrency,
                args.repeats,
                args.actors,
                root,
            )
        if solver:
            machines = [1, 2, 4, 8, 16, 32, 64]
            simulate(
                f"solver episodes ({solver['local_cpu_s'] * 1000:.1f} ms CPU each, measured; driver "
                f"{solver['driver_cpu_s'] * 1000:.2f} ms each, measured; 16 one-core actors per machine)",
                1 / solver["local_cpu_s"],
                solver["driver_cpu_s"],
                16,
                machines,
            )
            simulate(
                "served 9B target (assumed: 40 s per episode, 64 episodes per actor, 8 actors and one 8-GPU "
                "vLLM fleet per machine at 1.25 episodes/s per GPU; driver cost measured above)",
                64 / 40,
                solver["driver_cpu_s"],
                8,
                machines,
                server_rate_per_machine=8 * 1.25,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
        ray.shutdown()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
