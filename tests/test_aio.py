"""Bounded concurrency of independent jobs (``reharness.core.aio.bounded``)."""

from __future__ import annotations

import asyncio

import pytest

from reharness.core.aio import bounded


def test_results_come_as_jobs_finish_with_at_most_limit_running() -> None:
    running, peak, started = [0], [0], []

    async def work(item: tuple[str, float]) -> str:
        started.append(item[0])
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(item[1])
        running[0] -= 1
        return item[0].upper()

    async def main() -> list[tuple[str, str]]:
        items = [("a", 0.05), ("b", 0.01), ("c", 0.01), ("d", 0.0)]
        return [(item[0], result) async for item, result in bounded(items, 2, work)]

    got = asyncio.run(main())
    assert peak[0] == 2
    assert started == ["a", "b", "c", "d"]  # jobs start in the given order
    assert sorted(got) == [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D")]
    assert got[-1] == ("a", "A")  # the slow first job finishes last; the others did not wait for it


def test_an_error_cancels_the_jobs_still_running_and_propagates() -> None:
    cancelled = []

    async def work(item: int) -> int:
        try:
            if item == 1:
                await asyncio.sleep(0.01)
                raise ValueError("job 1 failed")
            await asyncio.sleep(10)
            return item
        except asyncio.CancelledError:
            cancelled.append(item)
            raise

    async def main() -> None:
        async for _ in bounded(range(4), 3, work):
            pass

    with pytest.raises(ValueError, match="job 1 failed"):
        asyncio.run(main())
    assert {0, 2} <= set(cancelled)  # (job 3 may have taken job 1's place just before the cancel)


def test_leaving_the_loop_early_cancels_the_rest_and_a_bad_limit_is_refused() -> None:
    finished = []

    async def work(item: int) -> int:
        await asyncio.sleep(0.001 if item == 0 else 10)
        finished.append(item)
        return item

    async def main() -> int:
        async for _, result in bounded(range(3), 3, work):
            return result
        return -1

    assert asyncio.run(main()) == 0 and finished == [0]

    async def bad() -> None:
        async for _ in bounded([1], 0, work):
            pass

    with pytest.raises(ValueError, match="limit must be at least 1"):
        asyncio.run(bad())
