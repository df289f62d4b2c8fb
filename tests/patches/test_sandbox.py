"""The sandbox worker: the hook contract, and runtime resource abuse (REFERENCE.md §6.2, cases 12–22).

Every case runs against the worker directly, i.e. with L1 (static validation) off: the process boundary,
the kernel confinement and the parent must hold on their own.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from sandbox_checks import ATTACK_MODULES, FAST, contained_failure, hook, proc_stat

from reharness.core.sandbox import confine
from reharness.patches.errors import (
    PatchCrash,
    PatchDisabled,
    PatchExecutionError,
    PatchMemoryError,
    PatchProtocolError,
    PatchRuntimeError,
    PatchTimeout,
)
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
from reharness.runtime.view import ReadOnlyView

CONTRACT = hook(
    """
    import re
    from difflib import SequenceMatcher

    def hook(ctx, nb):
        nb["calls"] = nb.get("calls", 0) + 1
        print("seen", ctx.step)
        ratio = SequenceMatcher(None, ctx.state.goal, ctx["state"]["goal"] + "!").ratio()
        things = ctx.things
        return {"step": ctx.step, "words": re.findall(r"[a-z]+", ctx.obs), "things": things,
                "first": things[1].name, "is_tuple": isinstance(things, tuple), "ratio": round(ratio, 3)}
    """
)


def test_hook_contract_ctx_views_nb_round_trip_and_stdout() -> None:
    ctx = {"step": 3, "obs": "a red box", "state": {"goal": "box"}, "things": [1, {"name": "x"}]}
    with HookWorker({"before_decision": CONTRACT}, FAST) as worker:
        first = worker.call("before_decision", ctx, {})
        assert first.value == {
            "step": 3, "words": ["a", "red", "box"], "things": [1, {"name": "x"}], "first": "x",
            "is_tuple": True, "ratio": 0.857,
        }  # fmt: skip
        assert first.nb == {"calls": 1} and first.stdout == "seen 3\n"
        nb_in = {"calls": 41}
        second = worker.call("before_decision", ctx, nb_in)
        assert second.nb == {"calls": 42} and nb_in == {"calls": 41}, "nb is owned by the parent"
        assert 0 < second.duration_s < FAST.call_timeout_s
        assert worker.spawn_count == 1


def test_runtime_views_as_ctx_and_thread_safety() -> None:
    src = "def hook(ctx, nb):\n    return [ctx.state.goal, ctx.items_seen, ctx['n']]\n"
    worker = HookWorker({"p": src}, FAST)
    assert worker.isolation_report() == {
        "isolation": "standard",
        "started": False,
        "failures": 0,
        "disabled": False,
    }
    view = ReadOnlyView({"state": {"goal": "mug"}, "items_seen": ("a", "b"), "n": 0})
    assert worker.call("p", view, {}).value == ["mug", ["a", "b"], 0]
    results: dict[int, list[int]] = {}

    def run(t: int) -> None:
        results[t] = [
            worker.call("p", {"state": {"goal": "g"}, "items_seen": [], "n": t * 100 + i}, {}).value[2]
            for i in range(30)
        ]

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {t: [t * 100 + i for i in range(30)] for t in range(4)} and worker.spawn_count == 1
    worker.close()
    with pytest.raises(PatchDisabled, match="closed"):
        worker.call("p", view, {})


def test_ctx_is_read_only_and_imports_are_restricted() -> None:
    hooks = {
        "write": "def hook(ctx, nb):\n    ctx.step = 5\n",
        "item": "def hook(ctx, nb):\n    ctx['step'] = 5\n",
        "imp": "def hook(ctx, nb):\n    import os\n    return os.getcwd()\n",
        "open": "def hook(ctx, nb):\n    return open('/etc/hostname').read()\n",
    }
    with HookWorker(hooks, FAST) as worker:
        for point, needle in [
            ("write", "read-only"),
            ("item", "TypeError"),
            ("imp", "not allowed"),
            ("open", "open"),
        ]:
            with pytest.raises(PatchRuntimeError, match=needle):
                worker.call(point, {"step": 1}, {})
        assert worker.failures == 0, "hook exceptions are not sandbox failures"


def test_runtime_error_carries_type_message_and_patch_traceback() -> None:
    src = hook(
        """
        def helper(x):
            return x["missing"]

        def hook(ctx, nb):
            return helper({})
        """
    )
    with HookWorker({"p": src}, FAST) as worker, pytest.raises(PatchRuntimeError) as info:
        worker.call("p", {}, {})
    assert "KeyError" in info.value.message and "'missing'" in info.value.message
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert '<patch:p>", line 2, in helper' in notes and 'return x["missing"]' in notes


def test_load_errors_unknown_points_and_isolation_report() -> None:
    hooks = {
        "bad": "def hook(ctx, nb)\n    return 1\n",
        "nohook": "x = 1\n",
        "ok": "def hook(ctx, nb):\n    return 2\n",
    }
    with HookWorker(hooks, FAST) as worker:
        with pytest.raises(PatchRuntimeError, match="failed to load SyntaxError"):
            worker.call("bad", {}, {})
        with pytest.raises(PatchRuntimeError, match="defines no function hook"):
            worker.call("nohook", {}, {})
        with pytest.raises(PatchRuntimeError, match="no 'after_feedback' hook"):
            worker.call("after_feedback", {}, {})
        assert worker.call("ok", {}, {}).value == 2
        report = worker.isolation_report()
    assert report["isolation"] == "standard" and report["sandboxed"] and report["started"]
    assert report["rlimits"] and report["no_new_privs"] and report["pdeathsig"]
    assert report["rlimit_values"]["as"] == FAST.memory_bytes and report["rlimit_values"]["fsize"] == 0
    abi = confine.landlock_abi()
    assert report["landlock_abi"] == abi and report["landlock"] == (abi > 0)
    assert report["landlock_net"] == (abi >= 4) and report["landlock_scoped"] == (abi >= 6)
    assert report["seccomp"] == (confine.load_libseccomp() is not None)


async def test_acall_drives_many_workers_concurrently() -> None:
    workers = [
        HookWorker({"p": "def hook(ctx, nb):\n    nb['n'] = ctx['i']\n    return ctx['i'] * 2\n"}, FAST)
        for _ in range(6)
    ]
    try:
        results = await asyncio.gather(
            *(w.acall("p", {"i": i}, {}) for i, w in enumerate(workers) for _ in range(3))
        )
        assert sorted(r.value for r in results) == sorted(2 * i for i in range(6) for _ in range(3))
        with pytest.raises(PatchTimeout):
            slow = HookWorker({"p": "def hook(ctx, nb):\n    while True:\n        pass\n"}, FAST)
            await slow.acall("p", {}, {})
        assert slow.pid is None and slow.failures == 1
        slow.close()
    finally:
        for w in workers:
            w.close()


def test_inprocess_mode_is_opt_in_and_best_effort() -> None:
    assert SandboxLimits().isolation == "standard"
    limits = SandboxLimits(isolation="inprocess", call_timeout_s=0.2)
    hooks = {"p": CONTRACT, "loop": "def hook(ctx, nb):\n    while True:\n        pass\n"}
    worker = HookWorker(hooks, limits)
    ctx = {"step": 1, "obs": "go", "state": {"goal": "g"}, "things": [0, {"name": "n"}]}
    assert worker.call("p", ctx, {}).value["first"] == "n"
    started = time.monotonic()
    with pytest.raises(PatchTimeout):
        worker.call("loop", {}, {})
    assert time.monotonic() - started < 1.0
    assert worker.pid is None and worker.isolation_report()["sandboxed"] is False


# ---------------------------------------------------------------- §6.2 runtime resource abuse
def test_12_infinite_loop_times_out_at_the_deadline(tmp_path: Path) -> None:
    contained_failure("def hook(ctx, nb):\n    while True:\n        pass\n", PatchTimeout, tmp_path)


@pytest.mark.parametrize(
    "expr",
    ["sum(range(10**12))", "sorted(range(10**8))", "list(range(10**9))", '("a" * 10**9).count("b")'],
)
def test_13_c_level_loops_are_killed_not_late(expr: str, tmp_path: Path) -> None:
    contained_failure(f"def hook(ctx, nb):\n    return {expr}\n", (PatchTimeout, PatchMemoryError), tmp_path)


@pytest.mark.parametrize(
    ("expr", "expect"),
    [
        ("3 ** (10**9)", PatchTimeout),
        ("str(10**100000)", PatchRuntimeError),
        ('int("9" * 10**6)', PatchRuntimeError),
    ],
)
def test_14_big_int_and_str_dos(expr: str, expect: type[Exception], tmp_path: Path) -> None:
    err = contained_failure(f"def hook(ctx, nb):\n    return {expr}\n", expect, tmp_path)
    if expect is PatchRuntimeError:
        assert "ValueError" in str(err)


def test_15_catastrophic_regex_times_out(tmp_path: Path) -> None:
    src = "import re\ndef hook(ctx, nb):\n    return bool(re.match(r'(a+)+$', 'a' * 40 + '!'))\n"
    contained_failure(src, PatchTimeout, tmp_path)


def test_16_memory_bombs(tmp_path: Path) -> None:
    err = contained_failure(
        'def hook(ctx, nb):\n    return len("x" * (4 << 30))\n', PatchMemoryError, tmp_path / "a"
    )
    assert "out of memory" in str(err)
    small = SandboxLimits(call_timeout_s=1.0, memory_bytes=256 << 20)
    src = "def hook(ctx, nb):\n    l = []\n    while True:\n        l.append('x' * 10**7 + str(len(l)))\n"
    contained_failure(src, (PatchMemoryError, PatchTimeout), tmp_path / "b", limits=small)


def test_16_gradual_leak_hits_the_rlimit_then_respawns() -> None:
    src = "KEEP = []\ndef hook(ctx, nb):\n    KEEP.append('k' * (40 << 20))\n    return len(KEEP)\n"
    limits = SandboxLimits(call_timeout_s=1.0, memory_bytes=256 << 20, max_failures=5)
    with HookWorker({"p": src}, limits) as worker:
        seen = []
        with pytest.raises(PatchMemoryError):
            for _ in range(10):
                seen.append(worker.call("p", {}, {}).value)
        assert seen == list(range(1, len(seen) + 1)) and 2 <= len(seen) < 7
        assert worker.pid is None, "a worker that ran out of memory is replaced"
        assert worker.call("p", {}, {}).value == 1, "the respawned worker starts clean"


def test_16_huge_nb_is_rejected_and_the_parent_nb_kept(tmp_path: Path) -> None:
    src = "def hook(ctx, nb):\n    nb['blob'] = 'y' * (24 << 20)\n"
    nb = {"kept": True}
    err = contained_failure(
        src, PatchProtocolError, tmp_path, nb=nb, limits=SandboxLimits(call_timeout_s=2.0)
    )
    assert "frame cap" in str(err) and nb == {"kept": True}


def test_17_recursion_and_deep_return_values(tmp_path: Path) -> None:
    err = contained_failure(
        "def f(n):\n    return f(n + 1)\ndef hook(ctx, nb):\n    return f(0)\n",
        PatchRuntimeError,
        tmp_path / "a",
    )
    assert "RecursionError" in str(err)
    deep = "def hook(ctx, nb):\n    x = []\n    for _ in range(100000):\n        x = [x]\n    return x\n"
    contained_failure(deep, PatchProtocolError, tmp_path / "b")
    nested = "def hook(ctx, nb):\n    x = 1\n    for _ in range(40):\n        x = [x]\n    return x\n"
    err = contained_failure(nested, PatchProtocolError, tmp_path / "c")
    assert "nested deeper than 32" in str(err)


def test_18_huge_return_value_hits_the_frame_cap(tmp_path: Path) -> None:
    limits = SandboxLimits(call_timeout_s=2.0)
    err = contained_failure(
        "def hook(ctx, nb):\n    return 'x' * (64 << 20)\n", PatchProtocolError, tmp_path, limits=limits
    )
    assert "frame cap" in str(err)


def test_19_stdout_flood_is_capped_and_the_protocol_intact() -> None:
    src = hook(
        """
        import os, sys
        def hook(ctx, nb):
            for i in range(100000):
                print('x' * 50)
                sys.stderr.write('e')
            os.write(2, b'e' * (1 << 20))  # the real stderr is /dev/null: nothing to fill up
            return 'done'
        """
    )
    with HookWorker({"p": src}, SandboxLimits(call_timeout_s=2.0, allowed_modules=ATTACK_MODULES)) as worker:
        result = worker.call("p", {}, {})
        assert result.value == "done" and len(result.stdout) == 4096
        assert worker.call("p", {}, {}).value == "done"


def test_20_threads_cannot_be_started(tmp_path: Path) -> None:
    src = hook(
        """
        import threading
        def burn():
            while True:
                pass
        def hook(ctx, nb):
            threading.Thread(target=burn, daemon=True).start()
        """
    )
    limits = SandboxLimits(call_timeout_s=0.4, allowed_modules=ATTACK_MODULES)
    err = contained_failure(src, PatchRuntimeError, tmp_path, limits=limits)
    assert "can't start new thread" in str(err)


def test_21_parent_write_does_not_deadlock_on_a_stuck_worker() -> None:
    arm = hook(
        """
        import signal
        def stuck(signum, frame):
            while True:
                pass
        def hook(ctx, nb):
            signal.signal(signal.SIGALRM, stuck)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
        """
    )
    limits = SandboxLimits(call_timeout_s=0.4, allowed_modules=ATTACK_MODULES)
    with HookWorker({"p": arm}, limits) as worker:
        worker.call("p", {}, {})
        time.sleep(0.15)  # the alarm fires while the worker waits for the next frame: it never reads again
        started = time.monotonic()
        with pytest.raises(PatchTimeout):
            worker.call("p", {"blob": "z" * (2 << 20)}, {})
        assert time.monotonic() - started < limits.call_timeout_s + 0.5


def test_22_circuit_breaker_disables_the_patch() -> None:
    limits = SandboxLimits(call_timeout_s=0.2, max_failures=3)
    with HookWorker({"p": "def hook(ctx, nb):\n    while ctx['spin']:\n        pass\n"}, limits) as worker:
        for _ in range(3):
            with pytest.raises(PatchTimeout):
                worker.call("p", {"spin": True}, {})
        spawns = worker.spawn_count
        started = time.monotonic()
        with pytest.raises(PatchDisabled) as info:
            worker.call("p", {"spin": False}, {})
        assert time.monotonic() - started < 0.01 and worker.spawn_count == spawns
        assert isinstance(info.value, PatchExecutionError) and "3 failures" in str(info.value)
        assert worker.disabled and worker.pid is None and worker.isolation_report()["disabled"]


def test_worker_state_in_proc_is_single_threaded() -> None:
    with HookWorker({"p": "def hook(ctx, nb):\n    return 1\n"}, FAST) as worker:
        worker.call("p", {}, {})
        assert worker.pid is not None
        status = Path(f"/proc/{worker.pid}/status").read_text()
        assert "\nThreads:\t1\n" in status and "NoNewPrivs:\t1" in status
        assert proc_stat(worker.pid) is not None


async def test_cancelled_acall_discards_the_worker_and_the_next_call_works() -> None:
    src = "def hook(ctx, nb):\n    while ctx['spin']:\n        pass\n    return 'ok'\n"
    with HookWorker({"p": src}, SandboxLimits(call_timeout_s=5.0)) as worker:
        await worker.astart()
        pid = worker.pid
        task = asyncio.create_task(worker.acall("p", {"spin": True}, {}))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert worker.pid is None and pid is not None and proc_stat(pid) is None
        assert (await worker.acall("p", {"spin": False}, {})).value == "ok" and worker.failures == 0


SPIN_FOR = hook(
    """
    import time
    def hook(ctx, nb):
        end = time.monotonic() + ctx['s']
        while time.monotonic() < end:
            pass
    """
)


def test_cpu_budget_exhaustion_is_a_crash_with_its_reason(tmp_path: Path) -> None:
    limits = SandboxLimits(call_timeout_s=3.0, cpu_seconds=1, allowed_modules=frozenset({"time"}))
    err = contained_failure(SPIN_FOR, PatchCrash, tmp_path, limits=limits, ctx={"s": 2.5})
    assert "CPU budget" in str(err) and "SIGXCPU" in str(err)


def test_workers_are_recycled_before_their_cpu_budget_or_after_max_calls() -> None:
    limits = SandboxLimits(call_timeout_s=0.3, cpu_seconds=1, allowed_modules=frozenset({"time"}))
    with HookWorker({"p": SPIN_FOR}, limits) as worker:
        for _ in range(6):
            worker.call("p", {"s": 0.2}, {})  # 1.2 s of CPU in all: more than one worker's budget
        assert worker.spawn_count >= 2 and worker.failures == 0
    with HookWorker({"p": "def hook(ctx, nb):\n    return 1\n"}, SandboxLimits(max_calls=3)) as worker:
        for _ in range(7):
            worker.call("p", {}, {})
        assert worker.spawn_count == 3
