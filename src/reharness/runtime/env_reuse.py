"""Environments kept between batches, for kits whose environments are expensive to start (``reuse_envs``).

Why: some environments hold a process that is slow to start (a JVM behind a real benchmark: 0.2–1.6 s of
wall time and about a CPU-second of class loading and JIT each). The executor builds ``concurrency``
environments per batch and used to close them at the batch's end, so work made of many short batches (the
paired reruns of ``improve``, ``experiment r1``'s packets and candidates, a pool's profile) started one
such process per environment per batch (``benchmarks/bench_env_reuse.py``: 4.3x faster with them kept).
This keeps the idle environments of a batch for the next batch with the same kit and environment options
(this process only; at most ``max_idle`` in all, the oldest closed first; all closed at exit).

Why it is safe: within a batch the executor already hands one environment to many episodes, in whatever
order they finish, so no episode can depend on which environment plays it or what it played before (each
episode starts with ``reset`` on its own task). Keeping an environment for the next batch adds no new
dependence. Only environments whose batch finished normally are kept; a batch that raised closes its own
(a worker thread may still be inside a step). Kits opt in (``EnvKit.reuse_envs``), so an environment that
holds per-instance state across ``reset`` is never shared unless its kit says it may be.

No library fits: a generic object pool (``queue``, ``multiprocessing`` pools) knows nothing of kits,
environment options or the executor's failure paths, which are the whole of this module.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import threading
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.envs.kit import EnvKit

#: Idle environments kept in all (one batch of the widest concurrency, times a few concurrent batches).
MAX_IDLE = 32


def reuse_key(kit: EnvKit, kwargs: dict[str, Any]) -> str | None:
    """The key under which ``kit``'s environments built with ``kwargs`` are kept, or None when they are not
    kept (the kit does not opt in, or the options are not plain data that identify the environment)."""
    if not kit.reuse_envs:
        return None
    try:
        options = json.dumps(kwargs, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return f"{kit.name}\n{options}"


class IdleEnvs:
    """Idle environments by (kit, environment options), oldest first; thread-safe."""

    def __init__(self, max_idle: int = MAX_IDLE) -> None:
        self.max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: list[tuple[str, TextEnvLike]] = []  # (key, environment), oldest first
        self.built = 0  #: environments this process built through :meth:`take`

    def take(self, kit: EnvKit, kwargs: dict[str, Any]) -> TextEnvLike:
        """A kept environment of ``kit`` with these options, else a new one."""
        key = reuse_key(kit, kwargs)
        if key is not None:
            with self._lock:
                for i, (kept, env) in enumerate(self._idle):
                    if kept == key:
                        del self._idle[i]
                        return env
        env = kit.make(**kwargs)
        with self._lock:
            self.built += 1
        return env

    def give(self, kit: EnvKit, kwargs: dict[str, Any], env: TextEnvLike) -> None:
        """Keep ``env`` (idle, unused by anyone) for a later :meth:`take`, or close it when its kit does
        not opt in; over ``max_idle``, the oldest kept environment is closed."""
        key = reuse_key(kit, kwargs)
        if key is None or self.max_idle <= 0:
            env.close()
            return
        with self._lock:
            self._idle.append((key, env))
            evicted, self._idle = self._idle[: -self.max_idle], self._idle[-self.max_idle :]
        for _, old in evicted:
            old.close()

    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def close_all(self) -> None:
        """Close every kept environment (at exit, or when a caller wants the processes gone now)."""
        with self._lock:
            envs, self._idle = self._idle, []
        for _, env in envs:
            with contextlib.suppress(Exception):  # at exit: a JVM bridge may already be gone
                env.close()


#: This process's idle environments (the executor's and the resolved runs').
IDLE_ENVS = IdleEnvs()
atexit.register(IDLE_ENVS.close_all)
