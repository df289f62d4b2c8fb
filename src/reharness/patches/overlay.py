"""Run a patch's hooks through the sandbox as a runtime :class:`~reharness.runtime.overlay.Overlay`.

A :class:`PatchOverlay` owns a small pool of sandbox workers bound to one patch version (one worker per
concurrently running episode, created lazily, at most ``max_workers``). ``ctx`` is sent as plain JSON and
``nb`` is owned by the host and round-tripped on every call, so a killed or respawned worker loses nothing
and episodes stay deterministic. The workers run with the patch's dialect (``reharness`` or ``r1``). Every
sandbox failure becomes ``HookOutcome(error=…, error_type=…)``: the hook
had no effect and the trajectory records why.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, cast

from reharness.patches.errors import PatchExecutionError
from reharness.patches.model import Patch
from reharness.patches.sandbox.limits import Dialect
from reharness.patches.sandbox.r1_dialect import split_blocks
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
from reharness.runtime.effects import HookOutcome
from reharness.runtime.overlay import Overlay
from reharness.runtime.view import ReadOnlyView, thaw


class PatchOverlay(Overlay):
    """The hooks of one patch, executed in sandbox workers."""

    def __init__(self, patch: Patch, limits: SandboxLimits | None = None, max_workers: int = 4) -> None:
        self.patch = patch
        self.name = f"patch-{patch.identity[:8]}"
        self.dialect = patch.dialect
        #: code blocks per hook point (more than one: a hook repeated in a Harness-R1 patch)
        self.blocks = {
            p: len(split_blocks(c)) if patch.dialect == "r1" else 1 for p, c in patch.hooks.items()
        }
        self.limits = replace(limits or SandboxLimits(), dialect=cast(Dialect, patch.dialect))
        self.max_workers = max(1, max_workers)
        self._idle: list[HookWorker] = []
        self._all: list[HookWorker] = []
        self._available: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.disabled = False

    @property
    def identity(self) -> str:
        return self.patch.identity

    @property
    def points(self) -> frozenset[str]:
        return frozenset(self.patch.hooks)

    def _new_worker(self) -> HookWorker:
        worker = HookWorker(dict(self.patch.hooks), self.limits)
        self._all.append(worker)
        return worker

    async def call(self, point: str, ctx: ReadOnlyView, nb: dict[str, Any]) -> HookOutcome:
        if point not in self.patch.hooks:
            return HookOutcome(nb=nb)
        loop = asyncio.get_running_loop()
        if self._available is None or self._loop is not loop:  # a semaphore belongs to one event loop
            self._available, self._loop = asyncio.Semaphore(self.max_workers), loop
        async with self._available:
            worker = self._idle.pop() if self._idle else self._new_worker()
            try:
                result = await worker.acall(point, thaw(ctx), nb)
            except PatchExecutionError as exc:
                kept = getattr(exc, "nb", None)  # r1: writes made before the failure persist
                return HookOutcome(
                    error=exc.message[:1000], error_type=exc.type, nb=nb if kept is None else kept
                )
            finally:
                self._idle.append(worker)
        return HookOutcome(value=result.value, nb=result.nb, duration_s=result.duration_s)

    def isolation_report(self) -> dict[str, Any]:
        return self._all[0].isolation_report() if self._all else {}

    async def close(self) -> None:
        for worker in self._all:
            worker.close()
        self._all.clear()
        self._idle.clear()
