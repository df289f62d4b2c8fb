"""Interpretation of a worker's reply to one call: validated result, or the typed error it stands for.

Nothing a worker sends is trusted: the frame is decoded strictly, its id must match the call, the result and
``nb`` are checked for depth, size and clean text (:func:`frames.check_value`) before the host sees them.
A :class:`Rejected` carries the typed error plus whether the worker must be killed (its channel can no longer
be trusted) — the supervisor counts it towards the circuit breaker. Exceptions the hook itself raised are
ordinary :class:`PatchRuntimeError`\\ s and do not count.
"""

from __future__ import annotations

from typing import Any, NoReturn

from reharness.core.sandbox import frames
from reharness.patches.errors import (
    PatchExecutionError,
    PatchMemoryError,
    PatchProtocolError,
    PatchRuntimeError,
)
from reharness.patches.sandbox.limits import SandboxLimits


class Rejected(Exception):
    """A sandbox failure (counts towards the circuit breaker); ``kill``: the worker must be replaced."""

    def __init__(self, error: PatchExecutionError, kill: bool) -> None:
        super().__init__(error.message)
        self.error, self.kill = error, kill


def interpret(
    body: bytes, call_id: int, point: str, limits: SandboxLimits, load_failed: bool
) -> tuple[Any, dict[str, Any], str]:
    """``(value, nb, stdout)`` of a successful call, else :class:`Rejected` or :class:`PatchRuntimeError`."""
    try:
        msg = frames.decode(body)
    except frames.FrameError as exc:
        raise Rejected(
            PatchProtocolError(f"hook {point!r}: invalid reply from the worker: {exc}"), True
        ) from None
    if type(msg) is not dict or msg.get("id") != call_id:
        raise Rejected(
            PatchProtocolError(f"hook {point!r}: the worker's reply does not match the call"), True
        )
    stdout = msg.get("stdout")
    stdout = stdout[: limits.max_stdout_chars] if type(stdout) is str else ""
    if msg.get("ok") is True and "result" in msg and type(msg.get("nb")) is dict:
        value, nb = msg["result"], msg["nb"]
        try:
            what = f"the return value of {point!r}"
            frames.check_value(
                value, what, limits.max_depth, limits.max_result_chars, limits.max_result_items, True
            )
            frames.check_value(nb, "nb", limits.max_depth)
        except frames.FrameError as exc:
            raise Rejected(
                PatchProtocolError(str(exc), hint="return a small, flat, JSON-like value"), False
            ) from None
        return value, nb, stdout
    error = msg.get("error")
    if msg.get("ok") is not False or type(error) is not dict:
        raise Rejected(PatchProtocolError(f"hook {point!r}: malformed reply from the worker"), True)
    try:
        reported({k: str(v) for k, v in error.items()}, point, limits, stdout, load_failed)
    except PatchRuntimeError as exc:
        nb = msg.get("nb")
        if type(nb) is dict:
            try:
                frames.check_value(nb, "nb", limits.max_depth)
                exc.nb = nb
            except frames.FrameError:
                pass
        raise


def reported(
    error: dict[str, str], point: str, limits: SandboxLimits, stdout: str, load_failed: bool
) -> NoReturn:
    """Raise what an error frame of the worker stands for."""
    kind, name, message = error.get("kind"), error.get("type", "Exception")[:100], error.get("msg", "")[:1024]
    if kind == "memory":
        raise Rejected(
            PatchMemoryError(
                f"hook {point!r} ran out of memory (limit {limits.memory_bytes} bytes)",
                hint="keep data in hooks and nb small",
            ),
            kill=True,  # its heap may be fragmented or still full: start afresh
        )
    if kind == "result":
        raise Rejected(
            PatchProtocolError(
                f"hook {point!r} returned something that cannot leave the sandbox: {name}: {message}",
                hint="return None or a dict of strings, numbers, lists and dicts (no NaN, sets or bytes)",
            ),
            kill=False,
        )
    exc = PatchRuntimeError(
        f"hook {point!r} {'failed to load' if load_failed else 'raised'} {name}: {message}"
    )
    tb = error.get("tb", "")[: limits.max_traceback_chars]
    if tb:
        exc.add_note(tb)
    if stdout:
        exc.add_note(f"hook output:\n{stdout}")
    raise exc
