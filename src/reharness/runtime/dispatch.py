"""Where a batch's episodes run: the executor seam between :func:`~reharness.runtime.executor.run_batch`
and the machines that play the episodes.

:func:`run_batch` owns everything that names and stores a run (the spec's hash, the task choice, the run
directory, resume, the group-commit writer); an :class:`EpisodeExecutor` only plays the missing episodes
of an :class:`EpisodeBatch` and hands each finished record to ``deliver``, which appends it to the store.
So the executor is not part of the run's identity: the local executor (:class:`LocalExecutor`, episodes
on this process's event loop) and the Ray executor (:mod:`reharness.runtime.ray_executor`, episodes on
long-lived Ray actors) write the same records into the same run directory, and a run started with one
resumes with the other.

A command that runs many batches through code that does not take an executor (``improve``'s paired
reruns, ``pool evolve``) sets the executor of its batches with :func:`use_executor`; ``run_batch``
uses it when it is not given one. ``ray`` is optional: this module never imports the Ray executor (the
CLI's :func:`reharness.cli.scale.build_executor` does, for ``--executor ray`` only).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from reharness.core.env_protocol import TextEnvLike
from reharness.core.hashing import derive_seed
from reharness.core.secrets import redact
from reharness.envs.registry import get_kit
from reharness.runtime.agents import Agent
from reharness.runtime.env_reuse import IDLE_ENVS
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness
from reharness.store.records import EpisodeRecord

#: Append one finished episode (its record and its redacted JSON line) to the run's store.
Deliver = Callable[[EpisodeRecord, str], Awaitable[None]]
Annotate = Callable[[EpisodeRecord], list[str]]


def episode_seed(run_seed: int, episode_index: int) -> int:
    """Seed of episode ``episode_index`` of a run seeded ``run_seed``."""
    return derive_seed(run_seed, episode_index)


class HarnessRoute(Protocol):
    """Per-task harness choice of a routed run (e.g. Harness-S Rank-1 routing): ``identity`` names the route
    in the run's hash; :meth:`harness_for` picks the harness of one task before it runs."""

    identity: str

    async def harness_for(self, task: Any, index: int) -> Harness: ...

    def harnesses(self) -> list[Harness]: ...


@dataclass
class EpisodeBatch:
    """What an executor needs to play the episodes of one run: episode ``i`` plays task
    ``indices[i]`` of env ``env_name`` (built with ``env_kwargs``) with seed ``episode_seed(seed, i)``."""

    run_id: str
    env_name: str
    env_kwargs: dict[str, Any]
    indices: list[int]
    seed: int
    agent: Agent
    harness: Harness
    concurrency: int
    route: HarnessRoute | None = None
    annotate: Annotate | None = None


class EpisodeExecutor(Protocol):
    """Plays the ``missing`` episodes of ``batch``; ``deliver`` is awaited once per finished episode.

    ``spare_env`` is an env of the batch that :func:`run_batch` already built (to choose the tasks); an
    executor may use it or close it. An exception from an episode (a bug: episode errors are data) stops
    the batch; records delivered before it stay stored. An executor that plays routed runs (picks each
    episode's harness with ``batch.route``) says so with a class attribute ``routes = True``."""

    name: str

    async def run_episodes(
        self, batch: EpisodeBatch, missing: list[int], deliver: Deliver, spare_env: TextEnvLike
    ) -> None: ...


def finished_line(record: EpisodeRecord, annotate: Annotate | None) -> str:
    """The JSON line of a finished episode: failure codes added (``annotate``), secrets redacted."""
    if annotate is not None:
        record.failure_codes = list(annotate(record))
    return redact(record.model_dump_json())


def redacted(record: EpisodeRecord) -> tuple[EpisodeRecord, str]:
    """``record`` with every secret redacted (see :mod:`reharness.core.secrets`; itself if it holds none)
    and its JSON line, serialised once: the store writes that line as it is. Redacting JSON text keeps it
    valid JSON (the secrets' JSON-escaped forms are matched too)."""
    line = record.model_dump_json()
    clean = redact(line)
    return (record, line) if clean == line else (EpisodeRecord.model_validate_json(clean), clean)


class LocalExecutor:
    """Episodes on this process's event loop, ``batch.concurrency`` at a time, each env call in a worker
    thread (one per concurrent episode, so a slow env step never waits for another's)."""

    name = "local"
    routes = True  #: plays routed runs (``batch.route``)

    async def run_episodes(
        self, batch: EpisodeBatch, missing: list[int], deliver: Deliver, spare_env: TextEnvLike
    ) -> None:
        width = max(1, min(batch.concurrency, len(missing)))
        kit = get_kit(batch.env_name)
        envs: asyncio.Queue[Any] = asyncio.Queue()
        envs.put_nowait(spare_env)
        for _ in range(width - 1):  # kept ones first when the kit reuses its environments
            envs.put_nowait(IDLE_ENVS.take(kit, batch.env_kwargs))
        steps = ThreadPoolExecutor(max_workers=width, thread_name_prefix="env")
        route = batch.route

        async def one(i: int) -> None:
            env = await envs.get()
            try:
                runner = EpisodeRunner(env, batch.agent, batch.harness, batch.run_id, executor=steps)
                task = await runner.env_call(env.get_task, batch.indices[i])  # generating a task can take ms
                if route is not None:  # a routed run: this task's harness, chosen before it runs
                    chosen = await route.harness_for(task, i)
                    runner = EpisodeRunner(env, batch.agent, chosen, batch.run_id, executor=steps)
                record = await runner.run(task, episode_seed(batch.seed, i), i)
            finally:
                envs.put_nowait(env)
            if batch.annotate is not None:
                record.failure_codes = list(batch.annotate(record))
            await deliver(*redacted(record))

        tasks = [asyncio.ensure_future(one(i)) for i in missing]
        finished = False
        try:
            await asyncio.gather(*tasks)
            finished = True
        except BaseException:  # a failing episode or a cancelled batch: stop the others before returning
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            steps.shutdown(wait=False, cancel_futures=True)
            while not envs.empty():  # kept for the next batch only when no worker can still be in a step
                env = envs.get_nowait()
                if finished:
                    IDLE_ENVS.give(kit, batch.env_kwargs, env)
                else:
                    env.close()


_current: ContextVar[EpisodeExecutor | None] = ContextVar("reharness_executor", default=None)


@contextlib.contextmanager
def use_executor(executor: EpisodeExecutor) -> Iterator[EpisodeExecutor]:
    """Within the block (and the asyncio tasks started in it), ``run_batch`` without an ``executor``
    argument plays its episodes on ``executor``."""
    token = _current.set(executor)
    try:
        yield executor
    finally:
        _current.reset(token)


def current_executor() -> EpisodeExecutor:
    """The executor set by :func:`use_executor`, else a :class:`LocalExecutor`."""
    return _current.get() or LocalExecutor()
