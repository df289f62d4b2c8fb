"""Host side of the confined BFCL worker (``worker.py``): spawn, talk, kill, respawn.

One worker per environment instance serves every episode that instance plays; ``start`` clears BFCL's
backend globals, so no state crosses episodes. A deadline bounds every request; a worker that misses it,
dies or breaks the protocol is killed, and the next request starts a fresh one (the episode's calls are
replayed by the environment, which owns the history).
"""

from __future__ import annotations

import os
import time
import weakref
from typing import Any

from reharness.core.errors import EnvError
from reharness.core.sandbox import channel, frames, process

WORKER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
MAX_FRAME = 8 << 20
START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 10.0
CONFINE = {"memory_bytes": 1 << 30, "cpu_seconds": 3600, "max_open_files": 64, "disable": []}


class WorkerFailed(Exception):
    """The worker missed a deadline, died or broke the protocol; it was killed."""


class BfclWorker:
    """A confined process running BFCL's official backends and checker for one episode at a time."""

    def __init__(self, package_paths: list[str]) -> None:
        self.paths = list(package_paths)
        self.caps: dict[str, Any] = {}
        self._holder = process.ProcessHolder()
        self._finalizer = weakref.finalize(self, process.ProcessHolder.kill, self._holder)
        process.install_cleanup()

    def close(self) -> None:
        self._holder.kill()

    def request(self, message: dict[str, Any], expect: str) -> dict[str, Any]:
        proc = self._holder.proc if self._holder.proc is not None and self._holder.proc.ours else None
        proc = proc or self._start()
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        try:
            channel.send(proc.pipes, frames.encode(message), deadline)
            reply = frames.decode(channel.recv(proc.pipes, deadline))
        except (channel.Expired, channel.Closed, frames.FrameError) as exc:
            self._holder.kill()
            raise WorkerFailed(
                f"the BFCL worker failed ({type(exc).__name__}: {exc}) and was stopped"
            ) from None
        if not isinstance(reply, dict) or reply.get("op") not in (expect, "error"):
            self._holder.kill()
            raise WorkerFailed("the BFCL worker sent an unexpected frame and was stopped")
        if reply["op"] == "error":
            raise WorkerFailed(f"the BFCL worker reported: {reply.get('message')}")
        return reply

    def _start(self) -> process.WorkerProcess:
        job = process.spawn_job(MAX_FRAME, 0, WORKER_PATH)
        try:
            proc = process.SERVICE.submit(job).result()
        except OSError as exc:
            raise EnvError(
                f"bfcl: cannot start the confined worker: {exc}", hint="check free memory"
            ) from exc
        self._holder.proc = proc
        deadline = time.monotonic() + START_TIMEOUT_S
        config = {"op": "config", "paths": self.paths, "confine": CONFINE}
        try:
            channel.send(proc.pipes, frames.encode(config), deadline)
            hello = frames.decode(channel.recv(proc.pipes, deadline))
        except (channel.Expired, channel.Closed, frames.FrameError) as exc:
            self._holder.kill()
            raise EnvError(
                f"bfcl: the confined worker did not start ({type(exc).__name__}: {exc})",
                hint="check that `python -c 'import bfcl_eval, mpmath'` works "
                "(pip install --no-deps bfcl-eval mpmath)",
            ) from None
        caps = hello.get("caps") if isinstance(hello, dict) else None
        if not isinstance(caps, dict):
            self._holder.kill()
            raise EnvError("bfcl: the confined worker sent a malformed hello frame")
        if caps.get("import_error"):
            self._holder.kill()
            raise EnvError(
                f"bfcl: the official BFCL code failed to import in the worker: {caps['import_error']}",
                hint="run: pip install --no-deps bfcl-eval mpmath",
            )
        self.caps = caps
        return proc
