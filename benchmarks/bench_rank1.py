"""Benchmark: the overhead of Rank-1 routing per task relative to a plain run, side by side in one run.

A household pool of 4 siblings (config deltas along four directions, plus the example snap patch on one)
with a profile measured on 30 valid tasks under the scripted ``solver`` (cheap episodes, so the router's
share is an upper bound for real agents). Rank-1 sends some tasks to siblings whose episodes are longer, so
a plain H0 run is not the fair reference for the *routing* cost: the reference arm runs exactly the same
per-task harnesses from a precomputed table (no router call). Alternating the order over ``--repeat``
rounds, each arm into a fresh directory (nothing loaded from a previous round), the same ``--n`` test tasks
run ``fixed`` (the table) and ``rank1`` (the router decides each task live). Prints ms per task of both
arms (and of plain H0, for scale), the routing, and the overhead (rank1 / fixed − 1): the aim is < 1 %.

Run: ``python benchmarks/bench_rank1.py [--n 200] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from reharness.patches.model import load_patch
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
from reharness.pool.measure import run_pool
from reharness.pool.profile import measure_profile
from reharness.pool.routed_run import OracleRoute, Rank1Route
from reharness.runtime import Harness, RunSpec, SolverAgent, base_harness_config, run_batch

SNAP = Path(__file__).resolve().parents[1] / "examples" / "patches" / "household_snap_to_admissible.yaml"


def build_pool(root: Path) -> Pool:
    h0 = base_harness_config("household").model_copy(update={"step_limit": 8})  # solver fails long tasks
    siblings = [
        Sibling(name="snap", direction="action_validity", base=h0, patches=[load_patch(SNAP)]),
        Sibling(name="longer", direction="loop_recovery", base=h0, delta={"step_limit": 30}),
        Sibling(name="window", direction="state_memory", base=h0, delta={"history_window": 4}),
        Sibling(name="goal", direction="goal_tracking", base=h0, delta={"step_limit": 12}),
    ]
    pool = Pool("household", h0, siblings, PolicyRef(spec="solver"), builtin_directions())
    pool.save(root)
    return pool


async def main(n: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pool = build_pool(root / "pool")
        agent = SolverAgent()
        valid = RunSpec(env="household", agent="solver", split="valid", n=30, seed=0, concurrency=8)
        h0, sibs = await run_pool(pool, agent, valid, root / "profile-runs")
        profile = measure_profile(pool, h0, sibs, policy=pool.policy, split="valid")
        spec = RunSpec(env="household", agent="solver", split="test", n=n, seed=0, concurrency=8)
        probe = Rank1Route(pool, profile)
        await run_batch(spec, agent, Harness(pool.h0), root / "probe", route=probe)
        table = {i: (None if sid == "H0" else sid) for i, sid in probe.chosen.items()}
        times: dict[str, list[float]] = {"plain": [], "fixed": [], "rank1": []}
        routing: dict[str, int] = {}
        decide: list[float] = []
        for r in range(repeat):
            arms = ("plain", "fixed", "rank1") if r % 2 == 0 else ("rank1", "fixed", "plain")
            for arm in arms:
                route = {
                    "plain": None,
                    "fixed": OracleRoute(pool, table),
                    "rank1": Rank1Route(pool, profile),
                }[arm]
                start = time.perf_counter()
                result = await run_batch(spec, agent, Harness(pool.h0), root / f"{arm}-{r}", route=route)
                times[arm].append((time.perf_counter() - start) / n)
                if arm == "rank1" and route is not None:
                    routing = route.routing(result.episodes)
                    decide.append(route.decide_s / n)
        plain, fixed, routed = (statistics.median(times[a]) for a in ("plain", "fixed", "rank1"))
        print(f"tasks {n}, repeats {repeat} (alternating order), solver agent, pool of {len(pool.siblings)}")
        print(f"plain H0      : {1e3 * plain:.3f} ms/task (for scale)")
        print(f"fixed routes  : {1e3 * fixed:.3f} ms/task (the same harness per task, no router call)")
        print(f"rank1 (live)  : {1e3 * routed:.3f} ms/task  routing {routing}")
        per_task = statistics.median(decide)
        share = per_task / fixed
        print(
            f"router        : {1e6 * per_task:.0f} µs/task inside the route = {100 * share:.2f} % of a task"
        )
        print(
            f"wall overhead : {100 * (routed / fixed - 1):+.2f} % per task (rank1/fixed - 1; noisy when busy)"
        )
        print(
            "aim < 1 %; the solver is the cheapest policy: both are upper bounds (model episodes cost more)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.n, args.repeat))
