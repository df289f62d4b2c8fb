"""The executor options shared by the commands that run episodes: ``--executor local|ray``,
``--ray-address`` and ``--ray-actors`` (see ``docs/scale-out.md``).

Every command that runs episodes takes them: ``run`` (also routed, ``--pool``), ``improve``, ``pool
evolve|eval|reanchor``, ``train engineer`` (data collection and the GRPO reward's paired reruns), ``train
policy`` (its rollouts: :mod:`reharness.training.ray_rollouts`) and ``experiment r1|s`` (every stage).
The exception is ``agent eval``, a quick greedy check of a tiny agent that always runs locally.

The options are checked while the command line is read (a bad ``--ray-address`` or ``--ray-actors``
exits 2 before any work), and :func:`build_executor` (or, for a ``--dry-run``,
:func:`check_executor_options`) refuses Ray options without ``--executor ray`` and
names the install command when ``ray`` is missing, so a refused command leaves no run directory behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import re
from collections.abc import Awaitable, Iterator
from typing import Annotated, TypeVar

import typer

from reharness.core.errors import ConfigError
from reharness.runtime.dispatch import EpisodeExecutor, LocalExecutor, use_executor

T = TypeVar("T")

DEFAULT_ACTORS = 2
_ADDRESS = re.compile(
    r"^(?:ray://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$"
)


class ExecutorKind(enum.StrEnum):
    """``--executor``: where the episodes run (a click choice, so a typo fails while parsing)."""

    local = "local"
    ray = "ray"


def ray_address(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    """Typer callback of ``--ray-address``: ``auto``, ``local``, ``HOST:PORT`` or ``ray://HOST:PORT``."""
    if value is None or ctx.resilient_parsing or value in ("auto", "local"):
        return value
    match = _ADDRESS.match(value.strip())
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise typer.BadParameter(
            f"{value!r} is not a Ray address. Pass auto (a running cluster), local (a new local instance), "
            "HOST:PORT (e.g. 10.0.0.1:6379) or ray://HOST:PORT (Ray Client, e.g. ray://head:10001)."
        )
    return value.strip()


Executor = Annotated[
    ExecutorKind,
    typer.Option(help="Where episodes run: local (this process) or ray (long-lived Ray actors)."),
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        callback=ray_address,
        help="With --executor ray: auto, local, HOST:PORT or ray://HOST:PORT (default: $RAY_ADDRESS, "
        "else a cluster started here with `ray start`, else a new local Ray instance).",
    ),
]
RayActors = Annotated[
    int | None,
    typer.Option(min=1, max=4096, help=f"With --executor ray: episode actors (default {DEFAULT_ACTORS})."),
]


def check_executor_options(executor: ExecutorKind, ray_address: str | None, ray_actors: int | None) -> None:
    """Refuse Ray options without ``--executor ray`` (also where nothing runs: a ``--dry-run``)."""
    if executor == ExecutorKind.ray:
        return
    options = (("--ray-address", ray_address), ("--ray-actors", ray_actors))
    given = [name for name, value in options if value is not None]
    if given:
        raise ConfigError(
            f"{' and '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} to --executor ray",
            hint="add --executor ray, or drop " + " and ".join(given),
        )


def build_executor(
    executor: ExecutorKind, ray_address: str | None, ray_actors: int | None
) -> EpisodeExecutor:
    """The executor of a command, connected (Ray) before the command writes anything."""
    check_executor_options(executor, ray_address, ray_actors)
    if executor != ExecutorKind.ray:
        return LocalExecutor()
    from reharness.runtime.ray_executor import RayExecutor, RayOptions, require_ray

    require_ray()  # the install command, before anything else
    ray_executor = RayExecutor(RayOptions(address=ray_address, actors=ray_actors or DEFAULT_ACTORS))
    ray_executor.connect()
    return ray_executor


async def close_executor(executor: EpisodeExecutor) -> None:
    """End the actors of a Ray executor (nothing to do for the local one)."""
    close = getattr(executor, "close", None)
    if close is not None:
        await close()


async def on_executor(executor: EpisodeExecutor, work: Awaitable[T]) -> T:
    """Await ``work`` with ``executor`` as the executor of every batch it runs (see
    :func:`~reharness.runtime.dispatch.use_executor`), then close the executor."""
    try:
        with use_executor(executor):
            return await work
    finally:
        await close_executor(executor)


@contextlib.contextmanager
def executor_scope(
    executor: ExecutorKind, ray_address: str | None, ray_actors: int | None
) -> Iterator[EpisodeExecutor]:
    """A synchronous command's executor: built (Ray: connected) on entry, the executor of every batch run
    inside the block (each ``asyncio.run`` and each thread's ``run_coroutine_threadsafe`` started in it
    copies the context that holds it), closed on exit."""
    episodes_on = build_executor(executor, ray_address, ray_actors)
    try:
        with use_executor(episodes_on):
            yield episodes_on
    finally:
        asyncio.run(close_executor(episodes_on))
