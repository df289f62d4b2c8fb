"""Environments kept between batches, for kits whose environments are expensive to start (``reuse_envs``).

Why: a real-benchmark environment holds a JVM (TextWorldExpress, ScienceWorld); starting one costs 0.2–1.6 s
of wall time and about a CPU-second of class loading and JIT. The executor builds ``concurrency``
environments per batch and used to close them at the batch's end, so work made of many short batches (the
paired reruns of ``improve``, ``experiment r1``'s packets and candidates, a pool's profile) spent most of the
machine starting JVMs: an ``experiment r1`` on a twx kit started about seven JVMs a second on 2 cores.
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
from collections import OrderedDict
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
        self._idle: OrderedDict[int, tuple[str, TextEnvLike]] = OrderedDict()
        self._next = 0
        self.built = 0  #: environments this process built through :meth:`take`
        self.reused = 0  #: :meth:`take` calls answered with a kept environment

    def take(self, kit: EnvKit, kwargs: dict[str, Any]) -> TextEnvLike:
        """A kept environment of ``kit`` with these options, else a new one."""
        key = reuse_key(kit, kwargs)
        if key is not None:
            with self._lock:
                for slot, (k, env) in self._idle.items():
                    if k == key:
                        del self._idle[slot]
                        self.reused += 1
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
        evicted: list[TextEnvLike] = []
        with self._lock:
            self._idle[self._next] = (key, env)
            self._next += 1
            while len(self._idle) > self.max_idle:
                evicted.append(self._idle.popitem(last=False)[1][1])
        for old in evicted:
            old.close()

    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def close_all(self) -> None:
        """Close every kept environment (at exit, or when a caller wants the processes gone now)."""
        with self._lock:
            envs = [env for _, env in self._idle.values()]
            self._idle.clear()
        for env in envs:
            with contextlib.suppress(Exception):  # at exit: a JVM bridge may already be gone
                env.close()


#: This process's idle environments (the executor's and the resolved runs').
IDLE_ENVS = IdleEnvs()
atexit.register(IDLE_ENVS.close_all)
