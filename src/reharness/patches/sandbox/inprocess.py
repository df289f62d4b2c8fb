"""The ``inprocess`` isolation level: hooks run in the host interpreter (tests and debugging only).

Not a sandbox — Python cannot sandbox itself (REFERENCE.md §6 §0) and a patch here can change the host's own
modules — so it is never the default. It reuses the worker's loader (same safe builtins, same restricted
import, same read-only ``ctx``) and sends every call through the same JSON encoding the worker uses, so
results, ``nb`` round-trips and error frames look exactly as they would from a worker. The deadline is best
effort: a ``sys.settrace`` line hook that cannot interrupt C code (``sum(range(10**12))`` runs to the end).
"""

from __future__ import annotations

import sys
import time
from types import FrameType
from typing import Any

from reharness.patches.sandbox import worker
from reharness.patches.sandbox.limits import SandboxLimits


class _Expired(BaseException):
    """Raised into the hook by the trace function; a BaseException so ``except Exception`` does not eat it."""


class InProcessHooks:
    """Hooks of one patch loaded into the host; :meth:`run` returns a worker-style reply body."""

    def __init__(self, hooks: dict[str, str], limits: SandboxLimits) -> None:
        self.limits = limits
        builtin_names = sorted(limits.builtins)
        self.hooks, self.load_errors = worker.load_hooks(
            hooks, builtin_names, limits.modules, limits.max_traceback_chars, limits.dialect
        )
        self._view = worker.r1.r1_view if limits.dialect == "r1" else worker.CtxView
        self._encode, self._decode = worker.make_codec()

    def run(self, call_id: int, point: str, ctx: dict[str, Any], nb: dict[str, Any]) -> bytes | None:
        """Call the hook on copies of ``ctx``/``nb``: a worker-style reply, ``None`` past the deadline."""
        fn = self.hooks.get(point)
        if fn is None:
            error = self.load_errors.get(point) or {"kind": "unknown_hook", "type": "KeyError", "msg": point}
            return self._encode({"id": call_id, "ok": False, "error": error, "stdout": ""}).encode()
        deadline = time.monotonic() + self.limits.call_timeout_s
        expired = False

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal expired
            if event == "line" and time.monotonic() > deadline:
                expired = True
                raise _Expired
            return local

        def trace(frame: FrameType, event: str, arg: Any) -> Any:
            return local

        previous = sys.gettrace()
        budget = self.limits.lines
        if budget is None:
            sys.settrace(trace)
        try:
            # with a line budget the worker's tracer replaces the deadline tracer (it also bounds the call)
            if isinstance(fn, list):
                ok, value, out = worker.r1.run_blocks(
                    worker.call_hook, fn, self._view, ctx, nb, self.limits.max_stdout_chars, budget
                )
            else:
                ok, value, out = worker.call_hook(
                    fn, self._view(ctx), nb, self.limits.max_stdout_chars, budget
                )
        except _Expired:  # the deadline passed outside the hook's own guard (building the ctx view)
            expired = True
        finally:
            sys.settrace(previous)
        if expired:
            return None
        if not ok:
            failed = {"id": call_id, "ok": False, "error": value, "stdout": out}
            if self.limits.dialect == "r1":
                try:
                    return self._encode(failed | {"nb": nb}).encode()
                except BaseException:
                    pass
            return self._encode(failed).encode()
        try:
            return self._encode(
                {"id": call_id, "ok": True, "result": value, "nb": nb, "stdout": out}
            ).encode()
        except BaseException as exc:  # what the worker reports as a "result" error
            info = worker.error_info(exc, skip=0)
            if info["kind"] != "memory":
                info |= {"kind": "result", "tb": ""}
            return self._encode({"id": call_id, "ok": False, "error": info, "stdout": out}).encode()
