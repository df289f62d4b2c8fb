"""What the Ray executor's episode actors and ``train policy``'s policy actors share: starting a set of
actors with a timeout and a clear error, mapping a lost actor or an actor's exception, and ending actors
(close, wait, kill).

``ray`` is imported by the callers (they hold the module); nothing here imports it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from reharness.core.errors import ReharnessError


class RayExecutorError(ReharnessError):
    """The Ray executor could not run the batch (no cluster, no room for its actors, actors kept dying)."""

    code = "executor_error"


def lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """The exceptions that mean an actor is gone (killed, crashed, its node lost)."""
    return (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError)


def end_actors(ray: Any, actors: list[Any], timeout_s: float = 30) -> None:
    """Ask every actor to ``close()`` (waiting up to ``timeout_s``; a dead actor has nothing left to
    close), then kill them all. Blocking: async callers run it in a thread."""
    if not actors:
        return
    closing = []
    for actor in actors:
        with contextlib.suppress(Exception):
            closing.append(actor.close.remote())
    if closing:
        ray.wait(closing, num_returns=len(closing), timeout=timeout_s)
    for actor in actors:
        with contextlib.suppress(Exception):  # already gone
            ray.kill(actor)


def start_actors(
    ray: Any,
    actors: list[Any],
    ready: Callable[[Any], Any],
    timeout_s: float,
    *,
    what: str,
    too_slow_hint: str,
    failed_hint: str,
) -> None:
    """Wait until every one of ``actors`` answers ``ready(actor)`` (an object ref). An actor whose
    ``__init__`` raised, or one that does not start within ``timeout_s``, ends them all and raises a
    :class:`RayExecutorError` (``what`` names the actors; the hints say how to fix each case). Blocking:
    async callers run it in a thread."""
    try:
        ray.get([ready(a) for a in actors], timeout=timeout_s)
    except ray.exceptions.GetTimeoutError:
        cpus = ray.cluster_resources().get("CPU", 0)
        end_actors(ray, actors, timeout_s=5)
        raise RayExecutorError(
            f"{len(actors)} {what} did not start within {timeout_s:g}s (the cluster has {cpus:g} CPUs)",
            hint=too_slow_hint,
        ) from None
    except (*lost_errors(ray), ray.exceptions.RayTaskError) as exc:
        end_actors(ray, actors, timeout_s=5)
        raise RayExecutorError(f"the {what} could not start: {_cause(exc)}", hint=failed_hint) from None


async def call_actors(ray: Any, calls: Awaitable[list[Any]], *, what: str, hint: str) -> list[Any]:
    """Await ``calls`` (a gather of actor calls): a lost actor becomes a :class:`RayExecutorError`
    (``what`` names it), an exception raised inside an actor is re-raised as itself."""
    try:
        return await calls
    except lost_errors(ray) as exc:
        raise RayExecutorError(f"{what} died: {_cause(exc)}", hint=hint) from None
    except ray.exceptions.RayTaskError as exc:
        raise task_error(exc) from None


def task_error(exc: Any) -> BaseException:
    """What to raise for a ``RayTaskError`` (an exception inside an actor): one of our clear errors as the
    actor raised it, anything else as an instance of its cause (with the actor's traceback)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, ReharnessError):
        return cause
    error: BaseException = exc.as_instanceof_cause()
    return error


def _cause(exc: BaseException) -> str:
    """The short reason of a Ray error: the actor's own exception when there is one."""
    cause = getattr(exc, "cause", None) or getattr(exc, "error_msg", None)
    text = str(cause if cause is not None else exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
