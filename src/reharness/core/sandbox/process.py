"""Spawning, killing and accounting for sandbox worker processes (L2 spawn, L5 lifecycle).

- **Spawn** once per worker life: ``Popen([python, -I|-P -s, -S, -B, worker.py, rfd, wfd, ppid, cap])``
  with a minimal environment (no secrets), stdio on ``/dev/null``, the protocol on two pipes passed with
  ``pass_fds``, ``start_new_session=True`` (its own process group, for ``killpg``) and no ``preexec_fn``
  (unsafe in threaded parents); the worker confines itself after exec.
- **One long-lived spawner thread.** ``PR_SET_PDEATHSIG`` fires when the *thread* that forked the worker exits
  (prctl(2)), not the process. Spawning from whatever thread happens to call — an asyncio executor thread, a
  short-lived request thread — would kill workers when that thread ends. All spawns (and reaps) therefore run
  on one daemon thread that lives as long as the host process.
- **Cleanup.** Every live worker is in a registry that is killed (``killpg`` + ``kill`` SIGKILL) at exit
  (``atexit``) and on SIGTERM of the host (a handler installed only where SIGTERM still has its default
  action); PDEATHSIG and EOF on the command pipe cover a host that dies without running any of this.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from reharness.core.sandbox.channel import Pipes

_EXIT_REASONS = {
    70: "the worker found its parent gone at start-up",
    71: "the worker got an invalid start-up configuration",
    72: "the worker received an invalid or oversized frame",
}
T = TypeVar("T")


class _Service:
    """A daemon thread that runs spawn and reap jobs, so PDEATHSIG is tied to a thread that never exits."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._owner = 0
        self._lock = threading.Lock()

    def _run(self) -> None:
        while True:
            job, future = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(job())
                except BaseException as exc:  # handed to the waiting caller
                    future.set_exception(exc)

    def submit(self, job: Callable[[], T]) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._owner != os.getpid():  # first use, or we are a forked child without the thread
                self._jobs = queue.SimpleQueue()
                threading.Thread(target=self._run, name="reharness-sandbox-spawner", daemon=True).start()
                self._owner = os.getpid()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((job, future))
        return future


SERVICE = _Service()


@dataclass
class WorkerProcess:
    """A running worker: its ``Popen``, its pipes and what it reported about itself."""

    popen: subprocess.Popen[bytes]
    pipes: Pipes
    spawned_at: float
    caps: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    busy_s: float = 0.0
    killed_by_us: bool = False
    reaped: bool = False
    owner: int = field(default_factory=os.getpid)  # a forked copy of the host must not touch it

    @property
    def ours(self) -> bool:
        return self.owner == os.getpid()

    @property
    def pid(self) -> int:
        return self.popen.pid


_LIVE: dict[int, WorkerProcess] = {}
_LIVE_LOCK = threading.Lock()


def worker_command(max_frame: int, hash_seed: int | None, rfd: int, wfd: int, script: str) -> list[str]:
    """The command line of a worker running the standalone ``script`` (it must never import ``reharness``)."""
    flags = ["-I"] if hash_seed is None else ["-P", "-s"]  # -I would ignore PYTHONHASHSEED
    args = [script, str(rfd), str(wfd), str(os.getpid()), str(max_frame)]
    return [sys.executable, *flags, "-S", "-B", *args]


def worker_env(hash_seed: int | None) -> dict[str, str]:
    env = {"LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = str(hash_seed)
    return env


def _popen(max_frame: int, hash_seed: int | None, script: str) -> WorkerProcess:
    child_r, parent_w = os.pipe()
    parent_r, child_w = os.pipe()
    try:
        popen = subprocess.Popen(
            worker_command(max_frame, hash_seed, child_r, child_w, script),
            env=worker_env(hash_seed),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(child_r, child_w),
            start_new_session=True,
        )
    except BaseException:
        for fd in (parent_r, parent_w):
            os.close(fd)
        raise
    finally:
        os.close(child_r)
        os.close(child_w)
    proc = WorkerProcess(popen, Pipes(parent_r, parent_w, max_frame), time.monotonic())
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    return proc


def spawn_job(max_frame: int, hash_seed: int | None, script: str) -> Callable[[], WorkerProcess]:
    """A job for :data:`SERVICE` that starts one worker process running ``script``."""
    return lambda: _popen(max_frame, hash_seed, script)


def signal_kill(proc: WorkerProcess) -> None:
    """SIGKILL the worker's process group (and the worker itself, should it have left the group)."""
    if proc.reaped or not proc.ours:
        return
    proc.killed_by_us = True
    for kill, target in ((os.killpg, proc.pid), (os.kill, proc.pid)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(target, signal.SIGKILL)


def reap(proc: WorkerProcess, timeout: float = 5.0) -> int | None:
    """Wait for the worker to exit, close our pipe ends, forget it; the exit status (``None`` if stuck)."""
    try:
        code = proc.popen.wait(timeout)
    except subprocess.TimeoutExpired:
        signal_kill(proc)
        try:
            code = proc.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
    proc.reaped = True
    proc.pipes.close()
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)
    return code


def exit_status(proc: WorkerProcess, wait_s: float) -> int | None:
    """The exit status of a worker that is exiting (after EOF on its pipe), or ``None`` if it lives on."""
    try:
        return proc.popen.wait(wait_s)
    except subprocess.TimeoutExpired:
        return None


def kill(proc: WorkerProcess) -> None:
    if not proc.ours:  # inherited through fork: close our copies of its pipes, leave the process alone
        proc.pipes.close()
        return
    signal_kill(proc)
    reap(proc)


class ProcessHolder:
    """A client's current worker process, shared with its ``weakref.finalize`` (which must not reference the
    client itself): ``weakref.finalize(client, ProcessHolder.kill, holder)`` kills the worker when the client
    is collected."""

    proc: WorkerProcess | None = None

    def kill(self) -> None:
        if self.proc is not None:
            kill(self.proc)
            self.proc = None


def kill_all() -> None:
    """Kill every live worker of this process (at exit and on SIGTERM); does not wait."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for proc in procs:
        signal_kill(proc)


def describe_exit(code: int | None, killed_by_us: bool, cpu_seconds: int) -> str:
    """Why a worker died, from its exit status."""
    if code is None:
        return "the worker stopped responding and could not be reaped"
    if code >= 0:
        return _EXIT_REASONS.get(code, f"the worker exited with code {code}")
    sig = -code
    if sig == signal.SIGXCPU:
        return f"the worker used up its CPU budget ({cpu_seconds} s, RLIMIT_CPU → SIGXCPU)"
    if sig == signal.SIGKILL and not killed_by_us:
        return (
            "the worker was killed by SIGKILL it did not get from the host (out of memory or hard CPU limit)"
        )
    if sig == signal.SIGSEGV:
        return "the interpreter crashed (SIGSEGV; e.g. a C-level stack overflow)"
    if sig == signal.SIGSYS:
        return "the worker made a forbidden system call (SIGSYS from seccomp)"
    if sig == signal.SIGXFSZ:
        return "the worker tried to write a file (SIGXFSZ, RLIMIT_FSIZE=0)"
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = str(sig)
    return f"the worker died from signal {name}"


def cpu_seconds_used(pid: int) -> float | None:
    """User + system CPU time of a live process, read from ``/proc`` (the worker cannot lie about it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


_SIGTERM_INSTALLED = False


def _on_sigterm(signum: int, frame: object) -> None:
    kill_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def install_cleanup() -> None:
    """Register the exit and SIGTERM cleanup once (SIGTERM only from the main thread, only if unhandled)."""
    global _SIGTERM_INSTALLED
    if _SIGTERM_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        return
    _SIGTERM_INSTALLED = True


atexit.register(kill_all)
