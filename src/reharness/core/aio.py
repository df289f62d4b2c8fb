"""Bounded concurrency for independent async jobs (batches of an experiment, methods of a batch).

Why: the experiments run many independent batches, each a few dozen episodes whose model calls the
backend batches together. Run one at a time, the model decodes small batches with a long tail (the last
slow episode of a batch holds up the next batch); run a few at a time, their episodes share the model's
batches. ``asyncio`` has no bounded ``as_completed``, so this is the one place that does it: results come
back as they finish (callers record each at once, so an interrupted run resumes), the first error cancels
the jobs still running and is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def bounded(
    items: Iterable[T], limit: int, work: Callable[[T], Awaitable[R]]
) -> AsyncIterator[tuple[T, R]]:
    """Yield ``(item, await work(item))`` as each finishes, with at most ``limit`` running at once.

    Jobs start in the order of ``items``. If one raises, the others are cancelled and the error propagates;
    leaving the loop early cancels the jobs not yet done.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    todo = list(items)
    gate = asyncio.Semaphore(limit)

    async def one(index: int) -> tuple[int, R]:
        async with gate:
            return index, await work(todo[index])

    tasks = [asyncio.ensure_future(one(i)) for i in range(len(todo))]
    try:
        for finished in asyncio.as_completed(tasks):
            index, result = await finished
            yield todo[index], result
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
