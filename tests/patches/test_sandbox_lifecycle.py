"""Worker lifecycle and robustness (REFERENCE.md §6.4, cases 34–38).

34 and the SIGTERM/exit variants run a real host process (a small script using reharness) and kill it;
35 calls from a short-lived thread; 36 drives many workers concurrently; 37 simulates failed probes; 38
checks that results do not depend on which worker process computed them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from sandbox_checks import FAST, gone, hook, our_children

from reharness.core.sandbox import process
from reharness.patches.errors import PatchSandboxUnavailable, PatchTimeout
from reharness.patches.sandbox import worker as worker_script
from reharness.patches.sandbox.supervisor import (
    WORKER_PATH,
    HookWorker,
    SandboxDegradedWarning,
    SandboxLimits,
)

HOST = """
import sys
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
SPIN = "def hook(ctx, nb):\\n    while True:\\n        pass\\n"
worker = HookWorker({"p": SPIN}, SandboxLimits(call_timeout_s=60))
worker.start()
print(worker.pid, flush=True)
if sys.argv[1] == "exit":
    sys.exit(0)  # no close(): the exit hooks must kill the worker
worker.call("p", {}, {})
"""


@pytest.mark.parametrize(
    ("mode", "sig"), [("call", signal.SIGKILL), ("call", signal.SIGTERM), ("exit", None)]
)
def test_34_workers_die_with_their_host(mode: str, sig: signal.Signals | None, tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(HOST)
    host = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        worker_pid = int(host.stdout.readline())
        if sig is not None:
            time.sleep(0.2)  # mid-call: the worker is spinning in the hook
            assert not gone(worker_pid, within_s=0.05)
            host.send_signal(sig)
        code = host.wait(timeout=10)
        assert code == (-sig if sig is not None else 0)
        assert gone(worker_pid, within_s=1.0), "orphaned worker"
    finally:
        host.kill()
        host.wait()


def test_35_calls_from_a_short_lived_thread_keep_the_worker_alive() -> None:
    """PDEATHSIG is thread-scoped (prctl(2)): it fires when the thread that forked the worker exits.

    Workers are therefore always forked by the sandbox's long-lived spawner thread, never by the calling
    thread, so a worker first used from a short-lived thread survives that thread.
    """
    with HookWorker({"p": "def hook(ctx, nb):\n    return ctx['n']\n"}, FAST) as worker:
        values: list[int] = []
        thread = threading.Thread(target=lambda: values.append(worker.call("p", {"n": 1}, {}).value))
        thread.start()
        thread.join()
        pid = worker.pid
        assert values == [1] and pid is not None
        time.sleep(0.1)
        assert not gone(pid, within_s=0.05), "the worker died with the thread that first used it"
        assert worker.call("p", {"n": 2}, {}).value == 2 and worker.pid == pid and worker.spawn_count == 1


def test_a_forked_host_gets_its_own_worker_and_leaves_the_parents_alone() -> None:
    with HookWorker({"p": "def hook(ctx, nb):\n    return ctx['n']\n"}, FAST) as worker:
        assert worker.call("p", {"n": 1}, {}).value == 1
        parent_worker = worker.pid
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the forked copy
            ok = worker.call("p", {"n": 2}, {}).value == 2 and worker.pid != parent_worker
            process.kill_all()
            worker.close()
            os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert worker.pid == parent_worker and worker.call("p", {"n": 3}, {}).value == 3


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _hammer(workers: int, calls: int) -> list[float]:
    pool = [
        HookWorker({"p": "def hook(ctx, nb):\n    nb['n'] = nb.get('n', 0) + 1\n    return ctx['i']\n"}, FAST)
    ]
    pool += [HookWorker(dict(pool[0].hooks), FAST) for _ in range(workers - 1)]
    latencies: list[float] = []

    async def drive(worker: HookWorker) -> None:
        nb: dict[str, int] = {}
        for i in range(calls):
            started = time.perf_counter()
            result = await worker.acall("p", {"i": i}, nb)
            latencies.append(time.perf_counter() - started)
            assert result.value == i
            nb = result.nb
        assert nb == {"n": calls}

    try:
        await asyncio.gather(*(drive(w) for w in pool))
    finally:
        for w in pool:
            w.close()
    return latencies


def _concurrency(workers: int, calls: int) -> None:
    fds, children = _fd_count(), set(our_children())
    latencies = asyncio.run(_hammer(workers, calls))
    latencies.sort()
    p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    print(f"\n{workers} workers x {calls} calls: p50 {p50 * 1e6:.0f} µs, p99 {p99 * 1e6:.0f} µs")
    assert _fd_count() == fds, "file descriptors leaked"
    assert set(our_children()) <= children, "zombies or stray workers remain"


def test_36_many_concurrent_workers_leak_nothing() -> None:
    _concurrency(workers=16, calls=150)


@pytest.mark.slow
def test_36_sixty_four_workers_ten_thousand_calls() -> None:
    _concurrency(workers=64, calls=10_000)


@pytest.mark.parametrize("missing", [{"landlock"}, {"seccomp"}, {"landlock", "seccomp"}])
def test_37_degraded_hosts_warn_in_standard_and_refuse_in_strict(missing: set[str]) -> None:
    src = "def hook(ctx, nb):\n    return 'ran'\n"
    standard = SandboxLimits(call_timeout_s=0.5, disable_layers=frozenset(missing))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with HookWorker({"p": src}, standard) as worker:
            assert worker.call("p", {}, {}).value == "ran"
            report = worker.isolation_report()
    assert all(not report[layer] and "simulated" in report["reasons"][layer] for layer in missing)
    assert set(report["missing"]) == missing and report["namespaces"] is False
    assert len([w for w in caught if issubclass(w.category, SandboxDegradedWarning)]) <= 1  # once per process
    strict = SandboxLimits(call_timeout_s=0.5, isolation="strict", disable_layers=frozenset(missing))
    with HookWorker({"p": src}, strict) as worker:
        for _ in range(2):
            with pytest.raises(PatchSandboxUnavailable, match="strict") as info:
                worker.call("p", {}, {})
            assert all(layer in str(info.value) for layer in missing)
        assert worker.pid is None and worker.spawn_count == 1, "refused once, before any patch code was sent"


def test_37_each_layer_alone_still_blocks_writes(tmp_path: Path) -> None:
    """Without Landlock, seccomp's open-for-write rule holds; without seccomp, Landlock's read-only rule."""
    src = hook(
        """
        def hook(ctx, nb):
            try:
                open(ctx['path'], 'w')
            except OSError as e:
                return e.errno
        """
    )
    target = tmp_path / "written.txt"
    for missing in ("landlock", "seccomp"):
        limits = SandboxLimits(
            allowed_modules=frozenset({"os"}), allowed_builtins=frozenset({"open", "OSError"})
        )
        limits = SandboxLimits(**{**limits.__dict__, "disable_layers": frozenset({missing})})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with HookWorker({"p": src}, limits) as worker:
                assert worker.call("p", {"path": str(target)}, {}).value in (1, 13)  # EPERM / EACCES
    assert not target.exists()


def test_strict_runs_where_landlock_and_seccomp_work() -> None:
    limits = SandboxLimits(isolation="strict")
    with HookWorker({"p": "def hook(ctx, nb):\n    return 1\n"}, limits) as worker:
        try:
            assert worker.call("p", {}, {}).value == 1
        except PatchSandboxUnavailable:
            pytest.skip("this kernel lacks Landlock or seccomp")
        assert worker.isolation_report()["isolation"] == "strict"


def test_38_results_are_identical_across_respawns() -> None:
    src = hook(
        """
        def hook(ctx, nb):
            nb["seen"] = nb.get("seen", []) + [ctx["step"]]
            if ctx["spin"]:
                while True:
                    pass
            words = set(ctx["text"].split())
            return {"order": list(words), "first": next(iter({w: 1 for w in words})), "seen": nb["seen"]}
        """
    )
    ctx = {"step": 1, "spin": False, "text": "the quick brown fox jumps over the lazy dog again and again"}
    nb = {"seen": [0]}
    limits = SandboxLimits(call_timeout_s=0.3)
    with HookWorker({"p": src}, limits) as worker:
        first = worker.call("p", ctx, nb)
        pid = worker.pid
        with pytest.raises(PatchTimeout):
            worker.call("p", {**ctx, "spin": True}, first.nb)
        second = worker.call("p", ctx, nb)  # a respawned worker, same inputs
        assert worker.pid != pid and worker.spawn_count == 2
    with HookWorker({"p": src}, limits) as other:
        third = other.call("p", ctx, nb)
    assert first.value == second.value == third.value and first.nb == second.nb == third.nb == {
        "seen": [0, 1]
    }


IDLE_HOST = """
import asyncio, os, sys, time
from reharness.patches import load_patch
from reharness.patches.overlay import PatchOverlay
from reharness.runtime.view import ReadOnlyView

overlay = PatchOverlay(load_patch(sys.argv[1]))
ctx = {"action": {"text": "go to the cabinet 1"}, "admissible": ["go to cabinet 1", "look"]}
outcome = asyncio.run(overlay.call("before_action", ReadOnlyView(ctx), {}))
holder = 0
if sys.argv[2] == "held":
    holder = os.fork()
    if holder == 0:  # keeps copies of the worker's pipes open: no EOF reaches the worker, only PDEATHSIG
        time.sleep(60)
        os._exit(0)
print(overlay.isolation_report()["pid"], holder, outcome.value["action"], flush=True)
time.sleep(60)
"""
SNAP_PATCH = (
    Path(__file__).resolve().parents[2] / "examples" / "patches" / "household_snap_to_admissible.yaml"
)


@pytest.mark.parametrize("pipe", ["closed", "held"])
def test_34_an_idle_patch_worker_dies_when_its_host_is_sigkilled(pipe: str, tmp_path: Path) -> None:
    """A host killed between calls (e.g. a stopped pytest run) leaves no worker behind.

    ``held``: a forked copy of the host keeps the worker's command pipe open, so the worker gets no EOF and
    only ``PR_SET_PDEATHSIG`` can end it.
    """
    script = tmp_path / "host.py"
    script.write_text(IDLE_HOST)
    host = subprocess.Popen(
        [sys.executable, str(script), str(SNAP_PATCH), pipe], stdout=subprocess.PIPE, text=True
    )
    holder = 0
    try:
        assert host.stdout is not None
        ready, _, _ = select.select([host.stdout], [], [], 20)
        assert ready, "the host did not report its worker"
        worker_pid, holder_pid, action = host.stdout.readline().split(maxsplit=2)
        pid, holder = int(worker_pid), int(holder_pid)
        assert action.strip() == "go to cabinet 1", "the patch's hook ran in the worker"
        assert not gone(pid, within_s=0.05)
        host.send_signal(signal.SIGKILL)
        assert host.wait(timeout=5) == -signal.SIGKILL
        assert gone(pid, within_s=3.0), "orphaned worker"
        if holder:
            assert not gone(holder, within_s=0.05), "the pipe holder must outlive the host for this check"
    finally:
        host.kill()
        host.wait()
        if holder:
            with contextlib.suppress(ProcessLookupError):
                os.kill(holder, signal.SIGKILL)


def _run_worker(expected_ppid: int, close_command_pipe: bool) -> int:
    """Start ``worker.py`` with its real launch arguments (but ``expected_ppid``); its exit status."""
    child_r, parent_w = os.pipe()
    parent_r, child_w = os.pipe()
    try:
        command = process.worker_command(1 << 20, None, child_r, child_w, WORKER_PATH)
        assert command.count(str(os.getpid())) == 1
        command[command.index(str(os.getpid()))] = str(expected_ppid)
        if close_command_pipe:
            os.close(parent_w)
        worker = subprocess.Popen(command, env=process.worker_env(None), pass_fds=(child_r, child_w))
        return worker.wait(timeout=10)  # a worker that waits for its config frame would hang here
    finally:
        for fd in (child_r, child_w, parent_r) + (() if close_command_pipe else (parent_w,)):
            os.close(fd)


def test_a_worker_whose_parent_died_before_prctl_exits_at_once() -> None:
    gone_parent = subprocess.Popen([sys.executable, "-c", "pass"])
    gone_parent.wait()  # the worker is told to expect a parent that no longer exists
    assert _run_worker(gone_parent.pid, close_command_pipe=False) == worker_script.EXIT_PARENT_GONE
    assert process.describe_exit(worker_script.EXIT_PARENT_GONE, False, 1).endswith("parent gone at start-up")


def test_a_worker_exits_cleanly_on_eof_of_its_command_pipe() -> None:
    assert _run_worker(os.getpid(), close_command_pipe=True) == 0
