"""Shared checks for the sandbox tests: containment of one failing case (REFERENCE.md §6, "for every case").

For every case: the host survives with its memory roughly unchanged, the typed error is raised within the
deadline plus slack, no process of the worker's group (and no unreaped child of ours) remains, canary files
are unchanged and nothing named with the test's token appeared in ``/tmp``, and a fresh worker then works.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits

SLACK_S = 0.75
FAST = SandboxLimits(call_timeout_s=0.4)
#: Modules the escape tests (§6.3) may import: L1 is off at this layer, the kernel and parent must hold.
ATTACK_MODULES = frozenset(
    {"os", "sys", "ctypes", "socket", "subprocess", "signal", "resource", "builtins", "posix", "importlib",
     "gc", "atexit", "threading", "pty", "multiprocessing", "urllib", "urllib.request", "struct", "json",
     "mmap", "errno", "math", "re", "time"}
)  # fmt: skip
OK_HOOK = "def hook(ctx, nb):\n    return {'ok': ctx['n']}\n"


def hook(src: str) -> str:
    return textwrap.dedent(src).strip() + "\n"


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw.rsplit(b")", 1)[1].split()
    return fields[0].decode(), int(fields[1]), int(fields[2])


def live_in_group(pgid: int) -> list[int]:
    """Non-zombie processes whose process group is ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat and stat[2] == pgid and stat[0] != "Z":
                found.append(int(entry))
    return found


def our_children() -> list[int]:
    """Children (zombies included) of this test process other than the spawner's live workers."""
    me = os.getpid()
    return [
        int(e)
        for e in os.listdir("/proc")
        if e.isdigit() and (s := proc_stat(int(e))) is not None and s[1] == me
    ]


def host_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def gone(pid: int, within_s: float = 1.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        stat = proc_stat(pid)
        if stat is None or stat[0] == "Z":
            return True
        time.sleep(0.01)
    return False


@dataclass
class Canary:
    """Files the attacks aim at, a secret outside the worker's readable paths, and a /tmp token."""

    root: Path
    token: str = field(default_factory=lambda: f"reharness-pwn-{uuid.uuid4().hex[:10]}")
    digests: dict[Path, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "secret.txt").write_text("OPENAI_API_KEY=canary-secret\n")
        (self.root / "victim.txt").write_text("do not touch\n")
        (self.root / "dir").mkdir(exist_ok=True)
        import reharness.patches.sandbox.worker as worker_module

        self.source = Path(worker_module.__file__)
        self.digests = {p: self._digest(p) for p in self._paths()}

    def _paths(self) -> list[Path]:
        return [*sorted(self.root.rglob("*")), self.source]

    @staticmethod
    def _digest(path: Path) -> str:
        st = path.lstat()
        data = path.read_bytes() if path.is_file() else b""
        return f"{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{hashlib.sha256(data).hexdigest()}"

    def check(self) -> None:
        now = {p: self._digest(p) for p in self._paths()}
        assert now == self.digests, "canary files changed"
        leaked = [name for name in os.listdir("/tmp") if self.token in name]
        assert not leaked, f"files appeared in /tmp: {leaked}"


def fresh_worker_works(limits: SandboxLimits = FAST) -> None:
    """A new worker with the case's limits (and a generous deadline: this is not the case) answers."""
    worker = HookWorker({"p": OK_HOOK}, replace(limits, call_timeout_s=max(limits.call_timeout_s, 2.0)))
    try:
        assert worker.call("p", {"n": 7}, {}).value == {"ok": 7}
    finally:
        worker.close()


def contained_failure(
    src: str,
    expect: type[BaseException] | tuple[type[BaseException], ...],
    tmp_path: Path,
    limits: SandboxLimits = FAST,
    ctx: dict[str, Any] | None = None,
    nb: dict[str, Any] | None = None,
    rss_slack: int = 64 << 20,
) -> BaseException:
    """Run one failing case with every containment check; returns the raised error."""
    canary = Canary(tmp_path / "canary")
    worker = HookWorker({"p": hook(src.replace("TOKEN", canary.token))}, limits)
    worker.start()
    pid = worker.pid
    assert pid is not None
    rss_before = host_rss()
    started = time.monotonic()
    with pytest.raises(expect) as info:
        worker.call("p", ctx or {}, nb or {})
    elapsed = time.monotonic() - started
    assert elapsed <= limits.call_timeout_s + SLACK_S, f"took {elapsed:.2f} s"
    worker.close()
    assert gone(pid), "the worker survived"
    assert live_in_group(pid) == [], "processes of the worker's group remain"
    assert pid not in our_children(), "the worker was not reaped"
    assert os.getppid() > 0 and host_rss() - rss_before < rss_slack, "host memory grew"
    canary.check()
    fresh_worker_works(limits)
    return info.value
