"""Many short batches on a JVM kit, with and without keeping idle environments between batches.

``python benchmarks/bench_env_reuse.py [--env twx-coin] [--batches 12] [--n 4] [--concurrency 4]``

Work made of many short batches (``improve``'s paired reruns, ``experiment r1``'s packets and candidates, a
pool's profile) used to build ``concurrency`` environments per batch and close them at its end: on a JVM kit
a JVM start per environment. This plays the same ``--batches`` batches (the scripted solver, ``--n`` test
episodes each, a different seed per batch) twice, arms interleaved batch by batch in one process: **reuse**
(the kit's ``reuse_envs``, the default for the twx and scienceworld kits: idle environments kept for the
next batch, :mod:`reharness.runtime.env_reuse`) and **fresh** (a copy of the kit under another name with
``reuse_envs`` off: none kept, what every batch did before). It
prints one JSON line per arm (wall seconds, environments built, episodes per second), the ratio, and
whether both arms gave the same trajectories (they must).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from reharness.envs.registry import get_kit, register_kit
from reharness.runtime import Harness, HarnessConfig, RunSpec, SolverAgent, run_batch
from reharness.runtime.env_reuse import IDLE_ENVS
from reharness.store.records import trajectory_digest


async def play(env: str, seed: int, n: int, concurrency: int, out: Path) -> tuple[float, str]:
    spec = RunSpec(env=env, agent="solver", split="test", n=n, seed=seed, concurrency=concurrency)
    started = time.perf_counter()
    result = await run_batch(spec, SolverAgent(), Harness(HarnessConfig(env=env)), out)
    return time.perf_counter() - started, trajectory_digest(result.episodes)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="twx-coin")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    kit = get_kit(args.env)
    if not kit.reuse_envs:
        raise SystemExit(f"{args.env}: its kit does not keep environments (reuse_envs is False)")
    register_kit(replace(kit, name=f"{args.env}-fresh", reuse_envs=False))
    arms = {"reuse": args.env, "fresh": f"{args.env}-fresh"}
    totals = {arm: {"seconds": 0.0, "built": 0, "digests": []} for arm in arms}
    with tempfile.TemporaryDirectory() as tmp:
        for batch in range(args.batches):
            for arm, env in arms.items():
                before = IDLE_ENVS.built
                seconds, digest = await play(
                    env, batch, args.n, args.concurrency, Path(tmp) / arm / str(batch)
                )
                totals[arm]["seconds"] += seconds  # type: ignore[operator]
                totals[arm]["built"] += IDLE_ENVS.built - before  # type: ignore[operator]
                totals[arm]["digests"].append(digest)  # type: ignore[attr-defined]
    IDLE_ENVS.close_all()
    episodes = args.batches * args.n
    for arm, t in totals.items():
        seconds = float(t["seconds"])  # type: ignore[arg-type]
        print(
            json.dumps(
                {
                    "arm": arm,
                    "env": args.env,
                    "batches": args.batches,
                    "episodes": episodes,
                    "seconds": round(seconds, 2),
                    "envs_built": t["built"],
                    "episodes_per_s": round(episodes / seconds, 2),
                }
            )
        )
    ratio = float(totals["fresh"]["seconds"]) / float(totals["reuse"]["seconds"])  # type: ignore[arg-type]
    same = totals["fresh"]["digests"] == totals["reuse"]["digests"]
    print(json.dumps({"speedup_reuse_over_fresh": round(ratio, 2), "same_trajectories": same}))


if __name__ == "__main__":
    asyncio.run(main())
