"""The parent side of the sandbox (L5): :class:`HookWorker` runs one patch version's hooks in a worker.

The parent is the enforcement point (REFERENCE.md §6 §5.4). Per call it sends ``ctx`` and the parent-owned
``nb`` under one wall-clock deadline (non-blocking writes, ``poll`` reads); when the deadline passes it
SIGKILLs the worker's process group, reaps it and raises :class:`PatchTimeout`, and the next call respawns a
worker lazily — nothing is lost because ``nb`` lives here. Replies are decoded strictly and validated (depth,
size, clean text) before the host sees them. Every failure is a typed error from
:mod:`reharness.patches.errors`; timeouts, crashes, memory and protocol errors count towards a circuit
breaker that disables the worker (:class:`PatchDisabled`) after ``max_failures``.

Isolation levels: ``strict`` refuses to send patch code to a worker without Landlock and seccomp
(:class:`PatchSandboxUnavailable`), ``standard`` (default) runs with what the host offers and warns once per
missing-layer combination, ``inprocess`` runs in the host for tests and debugging.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any, NoReturn

from reharness.core.sandbox import channel, frames, process
from reharness.patches.errors import (
    PatchCrash,
    PatchDisabled,
    PatchExecutionError,
    PatchProtocolError,
    PatchRuntimeError,
    PatchSandboxUnavailable,
    PatchTimeout,
)
from reharness.patches.sandbox import replies, report
from reharness.patches.sandbox.inprocess import InProcessHooks
from reharness.patches.sandbox.limits import (
    DEFAULT_ALLOWED_MODULES,
    DEFAULT_SAFE_BUILTINS,
    CallResult,
    SandboxLimits,
)
from reharness.patches.sandbox.report import SandboxDegradedWarning

__all__ = [
    "DEFAULT_ALLOWED_MODULES",
    "DEFAULT_SAFE_BUILTINS",
    "CallResult",
    "HookWorker",
    "SandboxDegradedWarning",
    "SandboxLimits",
]
_CPU_CHECK_EVERY = 64
#: The hook worker script (standalone: it never imports ``reharness``).
WORKER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


class HookWorker:
    """One persistent worker process bound to ONE patch version (``hooks``: hook point → source code).

    Thread-safe (one lock per worker) with a blocking :meth:`call` and an asyncio :meth:`acall`. Never reuse a
    worker for another patch version: make a new one.
    """

    def __init__(self, hooks: Mapping[str, str], limits: SandboxLimits | None = None) -> None:
        self.hooks = dict(hooks)
        self.limits = limits or SandboxLimits()
        self.failures = 0
        self.spawn_count = 0
        self.last_start_s = 0.0
        self._lock = threading.Lock()
        self._alock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._holder = process.ProcessHolder()
        self._reap_later: list[process.WorkerProcess] | None = None
        self._next_id = 0
        self._disabled: str | None = None
        self._unavailable: PatchSandboxUnavailable | None = None
        self._closed = False
        self._load_errors: dict[str, Any] = {}
        self._report: dict[str, Any] = {"isolation": self.limits.isolation, "started": False}
        self._inprocess: InProcessHooks | None = None
        if self.limits.isolation == "inprocess":
            self._inprocess = InProcessHooks(self.hooks, self.limits)
            self._load_errors = dict(self._inprocess.load_errors)
            self._report = report.inprocess_report()
        self._finalizer = weakref.finalize(self, process.ProcessHolder.kill, self._holder)
        process.install_cleanup()

    # ------------------------------------------------------------------ public API
    @property
    def pid(self) -> int | None:
        """The pid (= process group id) of the live worker process, if any."""
        proc = self._holder.proc
        return proc.pid if proc is not None else None

    @property
    def disabled(self) -> bool:
        return self._disabled is not None

    def isolation_report(self) -> dict[str, Any]:
        """Which layers the (last) worker achieved; ``started: False`` until it has started once."""
        return dict(self._report) | {"failures": self.failures, "disabled": self.disabled}

    def start(self) -> None:
        """Start the worker now (otherwise the first call does)."""
        with self._lock:
            self._check_usable()
            if self._inprocess is None and self._live() is None:
                self._start()

    async def astart(self) -> None:
        async with self._locked():
            self._check_usable()
            if self._inprocess is None and self._live() is None:
                await self._astart()

    def call(self, point: str, ctx: Mapping[str, Any], nb: dict[str, Any]) -> CallResult:
        """Run hook ``point`` on ``ctx`` and notebook ``nb`` (left as is: the result carries the new one)."""
        with self._lock:
            call_id, frame = self._prepare(point, ctx, nb)
            if self._inprocess is not None:
                started = time.monotonic()
                sent = frames.decode(frame[frames.HEADER.size :])  # the copies a worker would get
                body = self._inprocess.run(call_id, point, sent["ctx"], sent["nb"])
                if body is None:
                    self._fail(self._timeout(point), kill=False)
                return self._finish(point, call_id, body, started)
            proc = self._live() or self._start()
            started = time.monotonic()
            deadline = started + self.limits.call_timeout_s
            try:
                channel.send(proc.pipes, frame, deadline)
                body = channel.recv(proc.pipes, deadline)
            except (channel.Expired, channel.Closed, frames.FrameError) as exc:
                self._io_failure(exc, point)
            return self._finish(point, call_id, body, started)

    async def acall(self, point: str, ctx: Mapping[str, Any], nb: dict[str, Any]) -> CallResult:
        """:meth:`call` for asyncio: the pipes are driven by the running loop, no thread per call."""
        if self._inprocess is not None:
            return self.call(point, ctx, nb)
        async with self._locked():
            call_id, frame = self._prepare(point, ctx, nb)
            proc = self._live() or await self._astart()
            started = time.monotonic()
            deadline = started + self.limits.call_timeout_s
            try:
                await channel.asend(proc.pipes, frame, deadline)
                body = await channel.arecv(proc.pipes, deadline)
            except (channel.Expired, channel.Closed, frames.FrameError) as exc:
                self._io_failure(exc, point)
            except BaseException:  # cancelled mid-call: the channel state is unknown, start afresh next time
                self._discard()
                raise
            return self._finish(point, call_id, body, started)

    def close(self) -> None:
        """Kill the worker; later calls raise :class:`PatchDisabled`."""
        with self._lock:
            self._closed = True
            self._discard()

    def __enter__(self) -> HookWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ start-up
    def _config_frame(self) -> bytes:
        limits = self.limits
        confine = {
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.cpu_seconds,
            "max_open_files": limits.max_open_files,
            "disable": sorted(limits.disable_layers),
        }
        return frames.encode(
            {
                "op": "config",
                "confine": confine,
                "builtins": sorted(limits.builtins),
                "modules": sorted(limits.modules),
                "stdout_cap": limits.max_stdout_chars,
                "tb_cap": limits.max_traceback_chars,
                "dialect": limits.dialect,
                "line_budget": limits.lines,
            }
        )

    def _accept_hello(self, proc: process.WorkerProcess, body: bytes) -> bytes:
        """Check the worker's confinement report; the ``load`` frame to send if the worker is acceptable."""
        hello = frames.decode(body)
        if (
            not isinstance(hello, dict)
            or hello.get("op") != "hello"
            or not isinstance(hello.get("caps"), dict)
        ):
            raise frames.FrameError("the worker's hello frame is malformed")
        proc.caps = hello["caps"]
        summary = report.summarise(proc.caps, self.limits.isolation) | {"started": True, "pid": proc.pid}
        self._report = summary
        try:
            report.enforce(summary)
        except PatchSandboxUnavailable as exc:
            self._unavailable = exc
            self._discard()
            raise
        return frames.encode({"op": "load", "hooks": self.hooks})

    def _accept_loaded(self, body: bytes) -> None:
        loaded = frames.decode(body)
        if (
            not isinstance(loaded, dict)
            or loaded.get("op") != "loaded"
            or not isinstance(loaded.get("errors"), dict)
        ):
            raise frames.FrameError("the worker's loaded frame is malformed")
        self._load_errors = loaded["errors"]

    def _cannot_spawn(self, exc: OSError) -> NoReturn:
        self._fail(
            PatchSandboxUnavailable(
                f"cannot start a sandbox worker: {exc}", hint="check free memory, process and file limits"
            ),
            kill=False,
        )

    def _spawned(self, proc: process.WorkerProcess) -> None:
        self._holder.proc = proc
        self.spawn_count += 1

    def _start(self) -> process.WorkerProcess:
        job = process.spawn_job(self.limits.max_frame_bytes, self.limits.hash_seed, WORKER_PATH)
        try:
            proc = process.SERVICE.submit(job).result()
        except OSError as exc:
            self._cannot_spawn(exc)
        self._spawned(proc)
        deadline = proc.spawned_at + self.limits.start_timeout_s
        try:
            channel.send(proc.pipes, self._config_frame(), deadline)
            load = self._accept_hello(proc, channel.recv(proc.pipes, deadline))
            deadline = time.monotonic() + self.limits.call_timeout_s
            channel.send(proc.pipes, load, deadline)
            self._accept_loaded(channel.recv(proc.pipes, deadline))
        except (channel.Expired, channel.Closed, frames.FrameError) as exc:
            self._io_failure(exc, None)
        self.last_start_s = time.monotonic() - proc.spawned_at
        return proc

    async def _astart(self) -> process.WorkerProcess:
        job = process.spawn_job(self.limits.max_frame_bytes, self.limits.hash_seed, WORKER_PATH)
        try:
            proc = await asyncio.wrap_future(process.SERVICE.submit(job))
        except OSError as exc:
            self._cannot_spawn(exc)
        self._spawned(proc)
        deadline = proc.spawned_at + self.limits.start_timeout_s
        try:
            await channel.asend(proc.pipes, self._config_frame(), deadline)
            load = self._accept_hello(proc, await channel.arecv(proc.pipes, deadline))
            deadline = time.monotonic() + self.limits.call_timeout_s
            await channel.asend(proc.pipes, load, deadline)
            self._accept_loaded(await channel.arecv(proc.pipes, deadline))
        except (channel.Expired, channel.Closed, frames.FrameError) as exc:
            self._io_failure(exc, None)
        except BaseException:
            self._discard()
            raise
        self.last_start_s = time.monotonic() - proc.spawned_at
        return proc

    # ------------------------------------------------------------------ per call
    def _locked(self) -> _AsyncLock:
        loop = asyncio.get_running_loop()
        if self._alock is None or self._alock[0] is not loop:
            self._alock = (loop, asyncio.Lock())
        return _AsyncLock(self, self._alock[1])

    def _check_usable(self) -> None:
        if self._closed:
            raise PatchDisabled("this sandbox worker was closed", hint="create a new HookWorker")
        if self._unavailable is not None:
            raise self._unavailable
        if self._disabled is not None:
            raise PatchDisabled(
                f"the patch is disabled after repeated failures ({self._disabled})",
                hint="fix the hook so it stays within its time and memory budget",
            )

    def _prepare(self, point: str, ctx: Mapping[str, Any], nb: dict[str, Any]) -> tuple[int, bytes]:
        self._check_usable()
        if point not in self.hooks:
            raise PatchRuntimeError(
                f"this patch has no {point!r} hook", hint=f"its hooks are: {', '.join(self.hooks) or 'none'}"
            )
        self._next_id += 1
        try:
            frame = frames.encode({"id": self._next_id, "op": "call", "hook": point, "ctx": ctx, "nb": nb})
        except (TypeError, ValueError) as exc:
            raise PatchProtocolError(f"ctx/nb for {point!r} cannot be sent to the sandbox: {exc}") from None
        if len(frame) - frames.HEADER.size > self.limits.max_frame_bytes:
            self._fail(
                PatchProtocolError(
                    f"ctx plus nb for {point!r} is {len(frame)} bytes; the frame cap is "
                    f"{self.limits.max_frame_bytes}",
                    hint="keep the notebook small",
                ),
                kill=False,
            )
        return self._next_id, frame

    def _timeout(self, point: str | None) -> PatchTimeout:
        what = f"hook {point!r}" if point else "loading the patch"
        return PatchTimeout(
            f"{what} exceeded its {self.limits.call_timeout_s:g} s deadline; the worker was killed",
            hint="avoid unbounded loops and huge computations in hooks",
        )

    def _io_failure(self, exc: BaseException, point: str | None) -> NoReturn:
        """Map a transport failure to a typed error, kill the worker and count the failure."""
        proc = self._holder.proc
        if isinstance(exc, channel.Expired):
            if proc is not None and not proc.caps:  # no hello yet
                self._fail(
                    PatchTimeout(
                        f"the sandbox worker did not start within {self.limits.start_timeout_s:g} s"
                    ),
                    kill=True,
                )
            self._fail(self._timeout(point), kill=True)
        if isinstance(exc, frames.FrameError):
            self._fail(PatchProtocolError(f"the worker broke the protocol: {exc}"), kill=True)
        what = f"while running hook {point!r}" if point else "while starting"
        code = process.exit_status(proc, wait_s=0.05) if proc is not None else None
        if proc is not None and code is None:  # EOF from a live worker: it closed its own pipe
            self._fail(PatchProtocolError(f"the worker closed its reply pipe {what}"), kill=True)
        by_us = proc.killed_by_us if proc is not None else False
        reason = process.describe_exit(code, by_us, self.limits.cpu_seconds)
        self._fail(PatchCrash(f"the sandbox worker died {what}: {reason}"), kill=True)

    def _fail(self, exc: PatchExecutionError, kill: bool) -> NoReturn:
        if kill:
            self._discard()
        self.failures += 1
        if self.failures >= self.limits.max_failures and self._disabled is None:
            self._disabled = f"{self.failures} failures, the last: {exc.message}"
            self._discard()
        raise exc

    def _live(self) -> process.WorkerProcess | None:
        proc = self._holder.proc
        if proc is not None and not proc.ours:  # we are a forked copy of the host: start our own worker
            self._discard()
            return None
        return proc

    def _discard(self) -> None:
        """Kill the worker; in asyncio calls the reaping (~0.1 s for a big heap) happens off the loop."""
        proc = self._holder.proc
        if proc is None:
            return
        self._holder.proc = None
        if self._reap_later is None or not proc.ours:
            process.kill(proc)
        else:
            process.signal_kill(proc)
            self._reap_later.append(proc)

    def _finish(self, point: str, call_id: int, body: bytes, started: float) -> CallResult:
        try:
            value, nb, stdout = replies.interpret(
                body, call_id, point, self.limits, point in self._load_errors
            )
        except replies.Rejected as rejected:
            self._fail(rejected.error, kill=rejected.kill)
        duration = time.monotonic() - started
        self._after_success(duration)
        return CallResult(value, nb, stdout, duration)

    def _after_success(self, duration: float) -> None:
        """Recycle the worker after ``max_calls``, or before RLIMIT_CPU would kill it in mid-call."""
        proc = self._holder.proc
        if proc is None:
            return
        proc.calls += 1
        proc.busy_s += duration  # wall time in calls bounds the CPU time of the single-threaded worker
        limits = self.limits
        if limits.max_calls is not None and proc.calls >= limits.max_calls:
            self._discard()
        elif (
            proc.busy_s + limits.call_timeout_s >= 0.5 * limits.cpu_seconds
            or proc.calls % _CPU_CHECK_EVERY == 0
        ):
            used = process.cpu_seconds_used(proc.pid)
            if used is not None and used + limits.call_timeout_s >= limits.cpu_seconds:
                self._discard()  # the next call could run it out of CPU: start afresh instead


class _AsyncLock:
    """The per-worker asyncio lock plus the thread lock shared with blocking callers.

    While held, killed workers are reaped on the spawner thread when the call ends, not on the event loop.
    """

    def __init__(self, worker: HookWorker, alock: asyncio.Lock) -> None:
        self._worker, self._alock = worker, alock

    async def __aenter__(self) -> None:
        await self._alock.acquire()
        try:
            while not self._worker._lock.acquire(blocking=False):
                await asyncio.sleep(0.001)
        except BaseException:
            self._alock.release()
            raise
        self._worker._reap_later = []

    async def __aexit__(self, *exc: object) -> None:
        pending, self._worker._reap_later = self._worker._reap_later or [], None
        self._worker._lock.release()
        try:
            if pending:
                job = process.SERVICE.submit(lambda: [process.reap(proc) for proc in pending])
                await asyncio.shield(asyncio.wrap_future(job))
        finally:
            self._alock.release()
