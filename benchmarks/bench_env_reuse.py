"""Many short batches on a kit that keeps its environments, with and without keeping them between batches.

``python benchmarks/bench_env_reuse.py [--env NAME] [--batches 12] [--n 4] [--concurrency 4]``

Work made of many short batches (``improve``'s paired reruns, ``experiment r1``'s packets and candidates, a
pool's profile) used to build ``concurrency`` environments per batch and close them at its end: on a kit
whose environment holds a JVM, a JVM start per environment. This plays the same ``--batches`` batches (the
scripted solver, ``--n`` test episodes each, a different seed per batch) twice, arms interleaved batch by
batch in one process: **reuse** (the kit's ``reuse_envs``: idle environments kept for the next batch,
:mod:`reharness.runtime.env_reuse`) and **fresh** (a copy of the kit under another name with ``reuse_envs``
off: none kept, what every batch did before). ``--env`` defaults to the first kit in the registry's list
that sets ``reuse_envs``. It prints one JSON line per arm (wall seconds, environments built, episodes per
second), the ratio, and whether both arms gave the same trajectories (they must).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from reharness.envs.registry import all_kits, find_kit, get_kit, register_kit
from reharness.runtime import Harness, HarnessConfig, RunSpec, SolverAgent, run_batch
from reharness.runtime.env_reuse import IDLE_ENVS
from reharness.store.records import trajectory_digest


@dataclass
class Arm:
    env: str
    seconds: float = 0.0
    built: int = 0
    digests: list[str] = field(default_factory=list)


def first_reusing_kit() -> str:
    for row in all_kits(load=False):
        kit = find_kit(row.name)
        if kit is not None and kit.reuse_envs:
            return kit.name
    raise SystemExit("no installed kit sets reuse_envs: install one (docs/real-benchmarks.md lists them)")


async def play(arm: Arm, seed: int, n: int, concurrency: int, out: Path) -> None:
    spec = RunSpec(env=arm.env, agent="solver", split="test", n=n, seed=seed, concurrency=concurrency)
    before, started = IDLE_ENVS.built, time.perf_counter()
    result = await run_batch(spec, SolverAgent(), Harness(HarnessConfig(env=arm.env)), out)
    arm.seconds += time.perf_counter() - started
    arm.built += IDLE_ENVS.built - before
    arm.digests.append(trajectory_digest(result.episodes))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default=None, help="a kit that sets reuse_envs (default: the first one)")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    kit = get_kit(args.env or first_reusing_kit())
    if not kit.reuse_envs:
        raise SystemExit(f"{kit.name}: its kit does not keep environments (reuse_envs is False)")
    register_kit(replace(kit, name=f"{kit.name}-fresh", reuse_envs=False))
    arms = {"reuse": Arm(kit.name), "fresh": Arm(f"{kit.name}-fresh")}
    with tempfile.TemporaryDirectory() as tmp:
        for batch in range(args.batches):
            for name, arm in arms.items():
                await play(arm, batch, args.n, args.concurrency, Path(tmp) / name / str(batch))
    IDLE_ENVS.close_all()
    episodes = args.batches * args.n
    for name, arm in arms.items():
        row = {"arm": name, "env": kit.name, "batches": args.batches, "episodes": episodes}
        row |= {"seconds": round(arm.seconds, 2), "envs_built": arm.built}
        print(json.dumps(row | {"episodes_per_s": round(episodes / arm.seconds, 2)}))
    ratio = arms["fresh"].seconds / arms["reuse"].seconds
    same = arms["fresh"].digests == arms["reuse"].digests
    print(json.dumps({"speedup_reuse_over_fresh": round(ratio, 2), "same_trajectories": same}))


if __name__ == "__main__":
    asyncio.run(main())
