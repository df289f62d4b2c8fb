"""A persistent, confined Python interpreter for untrusted code, driven from the host (the parent side).

:class:`ConfinedInterpreter` runs code in a worker process (``interp_worker.py``) spawned, confined and
killed by the same machinery as the patch sandbox (:mod:`.process`, :mod:`.channel`, :mod:`.frames`,
``confine.py``). The namespace persists between :meth:`ConfinedInterpreter.execute` calls, so an agent can
keep variables across steps. Calls the code makes through its proxy object (``apis.<app>.<api>(**kw)``)
come back over the worker's pipe and are answered by the host's ``handler`` — the host owns all state.

The parent is the enforcement point: one wall-clock deadline per ``execute`` (API round trips included);
when it passes the worker's process group is SIGKILLed and reaped, the result says so, and the next call
starts a fresh worker (its variables are gone; the host's state is not). A crash, an oversized or malformed
frame, or exhausted memory ends the same way. Nothing the worker sends is trusted: frames are decoded
strictly and checked for size and depth before the handler sees them.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.core.errors import ConfigError, ReharnessError
from reharness.core.sandbox import channel, frames, process


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WORKER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp_worker.py")

#: Builtins agent code may use: ordinary pure Python (classes, exceptions, introspection of its own values).
DEFAULT_BUILTINS: frozenset[str] = _words(
    """
    abs all any ascii bin bool callable chr dict divmod enumerate filter float format frozenset getattr
    hasattr hash hex int isinstance issubclass iter len list map max min next object oct ord pow print
    property range repr reversed round set slice sorted staticmethod classmethod str sum super tuple type
    zip __build_class__ BaseException Exception ArithmeticError AssertionError AttributeError IndexError
    KeyError LookupError NameError NotImplementedError RuntimeError StopIteration TypeError ValueError
    ZeroDivisionError
    """
)
#: Pure standard-library modules agent code may import (pre-imported before confinement).
DEFAULT_MODULES: frozenset[str] = _words(
    """
    bisect calendar collections copy datetime decimal difflib fractions functools heapq itertools json
    math operator random re statistics string textwrap
    """
)

#: ``handler(app, api, args)`` → ``{"ok": True, "result": ...}`` or ``{"ok": False, "status": int,
#: "message": str}``.
Handler = Callable[[str, str, dict[str, Any]], dict[str, Any]]


class InterpreterUnavailable(ReharnessError):
    """The confined interpreter could not be started (no memory, no processes, no Python)."""

    code = "sandbox_unavailable"


@dataclass(frozen=True)
class InterpreterLimits:
    """Limits of one confined interpreter (enforced by the parent unless noted)."""

    #: Wall-clock deadline of one ``execute`` call, API round trips included; SIGKILL when it passes.
    step_timeout_s: float = 5.0
    #: Deadline for the worker to start, confine itself and report.
    start_timeout_s: float = 10.0
    #: RLIMIT_AS of the worker.
    memory_bytes: int = 768 << 20
    #: RLIMIT_CPU of the worker over its whole life (one episode).
    cpu_seconds: int = 600
    #: RLIMIT_NOFILE of the worker.
    max_open_files: int = 32
    #: Characters of output kept per call (the rest is counted and dropped in the worker).
    max_output_chars: int = 8000
    #: Traceback characters reported per failing call.
    max_traceback_chars: int = 3000
    #: Largest frame in either direction.
    max_frame_bytes: int = 4 << 20
    #: API calls one ``execute`` may make (a runaway loop of calls ends with an error reply).
    max_api_calls: int = 2000
    #: Name of the proxy object in the namespace.
    proxy: str = "apis"
    allowed_builtins: frozenset[str] = DEFAULT_BUILTINS
    allowed_modules: frozenset[str] = DEFAULT_MODULES
    #: ``PYTHONHASHSEED`` of the worker (``None``: random, and the worker runs with ``-I``).
    hash_seed: int | None = 0

    def __post_init__(self) -> None:
        for name in ("step_timeout_s", "start_timeout_s", "memory_bytes", "cpu_seconds", "max_frame_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"InterpreterLimits.{name} must be positive, got {getattr(self, name)!r}")
        if not self.proxy.isidentifier():
            raise ConfigError(f"InterpreterLimits.proxy must be an identifier, got {self.proxy!r}")


@dataclass
class ExecResult:
    """What one ``execute`` call gave: the captured output, the error (if any) and how it ended."""

    output: str
    ok: bool
    #: ``{"type", "msg", "tb"}`` of the exception the code raised, or of the sandbox failure.
    error: dict[str, str] | None = None
    #: The deadline passed and the worker was killed.
    timed_out: bool = False
    #: The worker was killed or died: the next call starts with an empty namespace.
    restarted: bool = False
    api_calls: int = 0
    duration_s: float = 0.0
    #: Every ``(app, api)`` the code called, in order, with the status of the reply (200 = success).
    calls: list[tuple[str, str, int]] = field(default_factory=list)


class ConfinedInterpreter:
    """One persistent confined interpreter (see module docstring). Not thread-safe: one episode uses it."""

    def __init__(self, handler: Handler, limits: InterpreterLimits | None = None) -> None:
        self.handler = handler
        self.limits = limits or InterpreterLimits()
        self.caps: dict[str, Any] = {}
        self.spawn_count = 0
        self._holder = process.ProcessHolder()
        self._next_id = 0
        self._finalizer = weakref.finalize(self, process.ProcessHolder.kill, self._holder)
        process.install_cleanup()

    @property
    def pid(self) -> int | None:
        proc = self._holder.proc
        return proc.pid if proc is not None and proc.ours else None

    def isolation_report(self) -> dict[str, Any]:
        """The confinement layers the (last) worker achieved, from its ``hello`` frame."""
        return dict(self.caps)

    def reset(self) -> None:
        """Drop the interpreter (its namespace with it); the next call starts a fresh one."""
        self._holder.kill()

    close = reset

    def execute(self, code: str) -> ExecResult:
        """Run ``code`` in the persistent namespace, answering its API calls with the handler."""
        started = time.monotonic()
        proc = self._live() or self._start()
        deadline = time.monotonic() + self.limits.step_timeout_s
        self._next_id += 1
        result = ExecResult(output="", ok=False)
        try:
            channel.send(
                proc.pipes, frames.encode({"op": "exec", "id": self._next_id, "code": code}), deadline
            )
            while True:
                msg = self._decode(channel.recv(proc.pipes, deadline))
                if msg.get("op") == "call":
                    reply = self._answer(msg, result)
                    channel.send(proc.pipes, frames.encode(reply), deadline)
                    continue
                if msg.get("op") != "done" or msg.get("id") != self._next_id:
                    raise frames.FrameError("unexpected frame from the interpreter")
                break
        except channel.Expired:
            self._holder.kill()
            result.timed_out = result.restarted = True
            result.error = _failure(
                "TimeoutError",
                f"execution exceeded the {self.limits.step_timeout_s:g} s time limit and was stopped; the "
                "interpreter was restarted, so variables defined earlier are gone",
            )
            result.duration_s = time.monotonic() - started
            return result
        except (channel.Closed, frames.FrameError) as exc:
            result.restarted = True
            result.error = _failure("SandboxError", self._died(proc, exc))
            result.duration_s = time.monotonic() - started
            return result
        stdout = msg.get("stdout")
        result.output = stdout[: self.limits.max_output_chars + 200] if type(stdout) is str else ""
        error = msg.get("error")
        result.ok = msg.get("ok") is True
        if not result.ok:
            if type(error) is dict:
                result.error = {
                    k: str(error.get(k, ""))[: self.limits.max_traceback_chars] for k in ("type", "msg", "tb")
                }
                if error.get("kind") == "memory":
                    self._holder.kill()
                    result.restarted = True
                    result.error = _failure(
                        "MemoryError", "the code ran out of memory; the interpreter was restarted"
                    )
            else:
                result.error = _failure("SandboxError", "the code failed and its error could not be reported")
        result.duration_s = time.monotonic() - started
        return result

    # ------------------------------------------------------------------ internals
    def _decode(self, body: bytes) -> dict[str, Any]:
        msg = frames.decode(body)
        if type(msg) is not dict:
            raise frames.FrameError("the interpreter sent a frame that is not an object")
        frames.check_value(msg, "a frame from the interpreter", 24, 4 * self.limits.max_frame_bytes, 100_000)
        return msg

    def _answer(self, msg: dict[str, Any], result: ExecResult) -> dict[str, Any]:
        app, api, args = msg.get("app"), msg.get("api"), msg.get("args")
        if type(app) is not str or type(api) is not str or type(args) is not dict:
            raise frames.FrameError("malformed call frame")
        result.api_calls += 1
        if result.api_calls > self.limits.max_api_calls:
            reply: dict[str, Any] = {
                "ok": False,
                "status": 429,
                "message": f"more than {self.limits.max_api_calls} API calls in one step",
            }
        else:
            try:
                reply = dict(self.handler(app, api, args))
            except Exception as exc:  # a bug in the handler is the host's: report it as a 500, keep going
                reply = {
                    "ok": False,
                    "status": 500,
                    "message": f"internal error: {type(exc).__name__}: {exc}",
                }
        code = reply.get("status")
        status = 200 if reply.get("ok") else (code if type(code) is int else 500)
        result.calls.append((app[:100], api[:100], status))
        reply["op"] = "reply"
        return reply

    def _died(self, proc: process.WorkerProcess, exc: BaseException) -> str:
        if isinstance(exc, frames.FrameError):
            self._holder.kill()
            return f"the interpreter broke the protocol ({exc}) and was restarted"
        code = process.exit_status(proc, wait_s=0.2)
        by_us = proc.killed_by_us
        self._holder.kill()
        why = process.describe_exit(code, by_us, self.limits.cpu_seconds)
        return f"the interpreter died ({why}) and was restarted"

    def _live(self) -> process.WorkerProcess | None:
        proc = self._holder.proc
        if proc is not None and not proc.ours:  # a forked copy of the host: start our own worker
            self._holder.kill()
            return None
        return proc

    def _config_frame(self) -> bytes:
        limits = self.limits
        confine = {
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.cpu_seconds,
            "max_open_files": limits.max_open_files,
            "disable": [],
        }
        return frames.encode(
            {
                "op": "config",
                "confine": confine,
                "builtins": sorted(limits.allowed_builtins),
                "modules": sorted(limits.allowed_modules),
                "stdout_cap": limits.max_output_chars,
                "tb_cap": limits.max_traceback_chars,
                "proxy": limits.proxy,
            }
        )

    def _start(self) -> process.WorkerProcess:
        job = process.spawn_job(self.limits.max_frame_bytes, self.limits.hash_seed, WORKER_PATH)
        try:
            proc = process.SERVICE.submit(job).result()
        except OSError as exc:
            raise InterpreterUnavailable(
                f"cannot start the confined interpreter: {exc}", hint="check free memory and process limits"
            ) from exc
        self._holder.proc = proc
        self.spawn_count += 1
        deadline = proc.spawned_at + self.limits.start_timeout_s
        try:
            channel.send(proc.pipes, self._config_frame(), deadline)
            hello = self._decode(channel.recv(proc.pipes, deadline))
        except (channel.Expired, channel.Closed, frames.FrameError) as exc:
            self._holder.kill()
            raise InterpreterUnavailable(
                f"the confined interpreter did not start: {type(exc).__name__} {exc}",
                hint="check that this Python can run `python -I -S -B` scripts",
            ) from exc
        if hello.get("op") != "hello" or type(hello.get("caps")) is not dict:
            self._holder.kill()
            raise InterpreterUnavailable("the confined interpreter sent a malformed hello frame")
        self.caps = hello["caps"]
        proc.caps = self.caps
        return proc


def _failure(name: str, message: str) -> dict[str, str]:
    return {"type": name, "msg": message, "tb": ""}
