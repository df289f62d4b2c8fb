"""Overlays: ordered sets of hooks layered on a base harness.

An :class:`Overlay` is anything that can run a hook point for one episode and report a
:class:`~reharness.runtime.effects.HookOutcome`. :class:`CallableOverlay` runs trusted Python callables
in-process; the sandbox for untrusted patch code plugs in behind the same interface (it owns its worker and
round-trips ``nb``). A failing hook never crashes an episode: its error is returned as data.

How several overlays combine (applied in order, first overlay first):
- ``on_init``: skills of all overlays are concatenated.
- ``before_decision``: messages are concatenated.
- ``before_action``: a chain — each overlay sees the action as rewritten/forced by the previous ones; a
  ``block`` stops the chain and the action is not executed.
- ``after_feedback``: hints are concatenated; the first ``force`` wins (later forces are recorded as dropped).
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from reharness.core.hashing import stable_hash
from reharness.runtime.effects import HOOK_POINTS, HookOutcome, canonical_hook_point
from reharness.runtime.view import ReadOnlyView

HookFn = Callable[[Any, dict[str, Any]], Any]


class Overlay(ABC):
    """A named, content-addressed set of hooks.

    ``dialect`` says which view the hooks expect: ``reharness`` (reharness's ``ctx``, effects by ``type``)
    or ``r1`` (Harness-R1's official ``ctx`` and return-value rules; see :mod:`reharness.runtime.r1`).
    """

    name: str
    dialect: str = "reharness"

    @property
    @abstractmethod
    def identity(self) -> str:
        """Content hash identifying this overlay's code/behaviour."""

    @property
    @abstractmethod
    def points(self) -> frozenset[str]:
        """Hook points this overlay implements."""

    @abstractmethod
    async def call(self, point: str, ctx: ReadOnlyView, nb: dict[str, Any]) -> HookOutcome:
        """Run the hook for ``point``; never raises for errors inside the hook."""

    async def close(self) -> None:  # noqa: B027 - optional for overlays without resources
        """Release resources (sandbox workers)."""


class CallableOverlay(Overlay):
    """Trusted in-process hooks given as Python callables ``hook(ctx, nb)`` (sync or async)."""

    def __init__(
        self,
        hooks: Mapping[str, HookFn],
        name: str = "overlay",
        identity: str | None = None,
        dialect: str = "reharness",
    ) -> None:
        self.name = name
        self.dialect = dialect
        self._hooks = {canonical_hook_point(point): fn for point, fn in hooks.items()}
        for point, fn in self._hooks.items():
            if not callable(fn):
                raise TypeError(f"hook {point!r} of overlay {name!r} is not callable")
        self._identity = identity or stable_hash(
            {p: _source_of(fn) for p, fn in sorted(self._hooks.items())} | {"name": name}
        )

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def points(self) -> frozenset[str]:
        return frozenset(self._hooks)

    async def call(self, point: str, ctx: ReadOnlyView, nb: dict[str, Any]) -> HookOutcome:
        fn = self._hooks.get(point)
        if fn is None:
            return HookOutcome(nb=nb)
        started = time.perf_counter()
        try:
            value = fn(ctx, nb)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # a failing hook has no effect; the error becomes data
            return HookOutcome(
                error=f"{type(exc).__name__}: {exc}"[:500],
                error_type="runtime_error",
                duration_s=time.perf_counter() - started,
                nb=nb,
            )
        return HookOutcome(value=value, duration_s=time.perf_counter() - started, nb=nb)


def _source_of(fn: HookFn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))


def noop_overlay(name: str = "noop") -> CallableOverlay:
    """An overlay whose four hooks all return ``None`` (for overhead benchmarks and tests)."""

    def nothing(ctx: Any, nb: dict[str, Any]) -> None:
        return None

    return CallableOverlay(dict.fromkeys(HOOK_POINTS, nothing), name=name)
