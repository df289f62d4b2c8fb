"""Benchmark: episodes per second of ``run --env db --agent solver`` with the old and the new store path.

Arms, side by side in one process, in alternating order at each concurrency (1, 8, 64 by default):

- ``old``: each finished episode is written on the event loop — open the JSONL, write, fsync, then a new
  SQLite connection for its index row — and env steps run on the loop (the path before group commit);
- ``group``: :class:`~reharness.store.writer.EpisodeWriter` (group commit, one connection, off the loop), env
  steps still on the loop;
- ``new``: group commit and env steps in worker threads (what ``run`` does now).

Each arm runs ``--n`` episodes into a fresh ``--out`` directory (under ``--dir``, a real disk by default, so
fsync costs what it costs there) with the CLI's failure-code annotation; the figure is episodes per second of
``run_batch`` wall time. A second table replays the same finished records into fresh stores (store alone:
``RunStore.append`` per episode vs ``EpisodeWriter`` with that many concurrent writers), which is the part
group commit changes; task generation and stepping are the same in every arm of the first table.

Run: ``python benchmarks/bench_store.py [--n 1000] [--concurrency 1 8 64] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from reharness.failures import failure_codes
from reharness.kits.db.env import DBEnv
from reharness.runtime import Harness, RunSpec, SolverAgent, base_harness_config, run_batch
from reharness.store.records import EpisodeRecord
from reharness.store.run_store import RunStore
from reharness.store.writer import EpisodeWriter

ARMS = ("old", "group", "new")


async def run_arm(arm: str, n: int, concurrency: int, out: Path, harness: Harness) -> tuple[float, str]:
    DBEnv.steps_off_loop = arm == "new"  # type: ignore[attr-defined]
    spec = RunSpec(env="db", agent="solver", n=n, concurrency=concurrency)
    started = time.perf_counter()
    result = await run_batch(
        spec, SolverAgent(), harness, out, annotate=failure_codes, group_commit=arm != "old"
    )
    elapsed = time.perf_counter() - started
    return n / elapsed, result.digest


async def replay(records: list[EpisodeRecord], concurrency: int, run_dir: Path, grouped: bool) -> float:
    store = RunStore(run_dir)
    run_dir.mkdir(parents=True)
    pending = iter(records)
    started = time.perf_counter()
    async with EpisodeWriter(store) as writer:

        async def worker() -> None:
            for record in pending:
                if grouped:
                    await writer.append(record)
                else:
                    store.append(record)
                    await asyncio.sleep(0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(records) / (time.perf_counter() - started)


async def main_async(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench_store_", dir=args.dir))
    harness = Harness(base_harness_config("db"))
    print(f"run --env db --agent solver --n {args.n}: episodes/s (store under {root})")
    print(f"{'concurrency':>11} " + " ".join(f"{a:>9}" for a in ARMS) + "   new/old")
    records: list[EpisodeRecord] = []
    try:
        for round_, c in enumerate(args.concurrency):
            order = ARMS if round_ % 2 == 0 else tuple(reversed(ARMS))
            rates: dict[str, float] = {}
            digests = set()
            for arm in order:
                rate, digest = await run_arm(arm, args.n, c, root / f"{arm}-{c}", harness)
                rates[arm] = rate
                digests.add(digest)
            assert len(digests) == 1, "arms produced different trajectories"
            cells = " ".join(f"{rates[a]:>9.0f}" for a in ARMS)
            print(f"{c:>11} {cells}   {rates['new'] / rates['old']:.1f}x")
            if not records:
                records = RunStore(next((root / f"new-{c}").iterdir())).episodes()
        print(f"\nstore alone: {len(records)} finished records appended, episodes/s")
        print(f"{'writers':>11} {'per-episode':>12} {'group':>9}   group/per-episode")
        for round_, c in enumerate(args.concurrency):
            order = (False, True) if round_ % 2 == 0 else (True, False)
            rates_by: dict[bool, float] = {}
            for grouped in order:
                rates_by[grouped] = await replay(records, c, root / f"replay-{c}-{grouped}" / "r", grouped)
            ratio = rates_by[True] / rates_by[False]
            print(f"{c:>11} {rates_by[False]:>12.0f} {rates_by[True]:>9.0f}   {ratio:.1f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--dir", default=str(Path.cwd()), help="where the temporary run directories go")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
