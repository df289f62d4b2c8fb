"""Escape and side-effect attempts against the worker (REFERENCE.md §6.3, cases 23–33).

L1 is off here and the hooks may import ``os``, ``ctypes``, ``socket`` … (``ATTACK_MODULES``, a test-only
policy): what holds is the process boundary, rlimits, no_new_privs, Landlock, seccomp and the parent. Each
attack hook tries several things and reports what happened to each, so one worker covers a whole case; the
assertions need Landlock and seccomp, which this project's CI kernel provides.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import platform
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sandbox_checks import ATTACK_MODULES, Canary, contained_failure, fresh_worker_works, gone, hook

from reharness.core.sandbox import confine
from reharness.patches.errors import PatchCrash, PatchProtocolError
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
from reharness.runtime.effects import EffectError, parse_effect

ALL_BUILTINS = frozenset(dir(builtins))
#: L1 off: every builtin (open, type, __build_class__ …) and the attack modules.
BASE_LIMITS = SandboxLimits(call_timeout_s=2.0, allowed_modules=ATTACK_MODULES, allowed_builtins=ALL_BUILTINS)
#: The limits of the current test: every case runs in both dialects (r1: Harness-R1's dict-subclass ctx and
#: pre-injected modules) — the same worker, the same confinement. The r1 line budget would stop most attacks
#: in library code before they reach the kernel, so it is lifted here (tests/patches/test_r1_sandbox.py
#: checks it); what must hold is the process boundary, not the tracer.
LIMITS = BASE_LIMITS
pytestmark = pytest.mark.skipif(
    confine.landlock_abi() < 6 or confine.load_libseccomp() is None,
    reason="the escape tests assert the Landlock (ABI ≥ 6) and seccomp layers",
)


@pytest.fixture(autouse=True, params=["reharness", "r1"])
def dialect(request: pytest.FixtureRequest) -> Iterator[str]:
    global LIMITS
    LIMITS = replace(BASE_LIMITS, dialect=request.param, line_budget=10**9 if request.param == "r1" else None)
    yield request.param
    LIMITS = BASE_LIMITS


TRY = """
import os, sys, errno
def attempt(out, name, fn):
    try:
        out[name] = "ok:" + repr(fn())[:60]
    except BaseException as exc:
        code = getattr(exc, "errno", None)
        out[name] = type(exc).__name__ + (":" + errno.errorcode.get(code, str(code)) if code else "")
"""


@contextlib.contextmanager
def attack(
    tmp_path: Path, body: str, ctx: dict[str, Any] | None = None
) -> Iterator[tuple[dict[str, str], Canary]]:
    """Run an attack hook (``TOKEN`` → the canary token) and check containment around the caller's asserts."""
    canary = Canary(tmp_path / "canary")
    src = TRY + hook(body).replace("TOKEN", canary.token)
    worker = HookWorker({"p": src}, LIMITS)
    try:
        result = worker.call("p", {"dir": str(canary.root), "token": canary.token, **(ctx or {})}, {})
        pid = worker.pid
        assert isinstance(result.value, dict)
        yield result.value, canary
        assert worker.call("p", {"dir": str(canary.root), "token": canary.token, **(ctx or {})}, {}).value
    finally:
        worker.close()
    assert pid is not None and gone(pid)
    canary.check()
    fresh_worker_works()


#: The raw-syscall tests use x86-64 syscall numbers and machine code.
x86_64_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 syscall numbers")


def denied(outcome: str) -> bool:
    return outcome.startswith(("PermissionError", "OSError:EPERM", "OSError:EACCES")) or "EPERM" in outcome


def test_23_files_cannot_be_read_outside_the_stdlib_or_written(tmp_path: Path) -> None:
    body = """
    def hook(ctx, nb):
        out, d = {}, ctx.dir
        attempt(out, "passwd", lambda: open("/etc/passwd").read())
        attempt(out, "secret", lambda: open(d + "/secret.txt").read())
        attempt(out, "ssh", lambda: open(os.path.expanduser("~/.ssh/id_rsa")).read())
        attempt(out, "environ", lambda: open("/proc/self/environ").read())
        attempt(out, "penv", lambda: open(f"/proc/{os.getppid()}/environ").read())
        attempt(out, "pmem", lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(1))
        attempt(out, "tmp", lambda: open("/tmp/TOKEN", "w").write("x"))
        attempt(out, "own_source", lambda: open(sys.argv[0], "a").write("#"))
        attempt(out, "unlink", lambda: os.unlink(d + "/victim.txt"))
        attempt(out, "rename", lambda: os.rename(d + "/victim.txt", d + "/moved"))
        attempt(out, "chmod", lambda: os.chmod(d + "/victim.txt", 0o777))
        attempt(out, "symlink", lambda: os.symlink("/etc/passwd", d + "/dir/link"))
        attempt(out, "truncate", lambda: os.truncate(d + "/victim.txt", 0))
        attempt(out, "mkdir", lambda: os.mkdir("/tmp/TOKEN-dir"))
        attempt(out, "stdlib_ok", lambda: len(open(os.__file__).read()) > 0)
        return out
    """
    with attack(tmp_path, body) as (out, _):
        assert out.pop("stdlib_ok") == "ok:True", "lazy stdlib reads keep working"
        assert out.pop("ssh").startswith(("PermissionError", "FileNotFoundError"))
        assert all(denied(v) for v in out.values()), out


def test_24_network_is_closed(tmp_path: Path) -> None:
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0reharness-{os.getpid()}")
    abstract.listen()
    for s in (tcp, udp, unix, abstract):
        s.setblocking(False)
    body = """
    import socket, urllib.request
    def hook(ctx, nb):
        out = {}
        attempt(out, "socket", lambda: socket.socket())
        attempt(out, "tcp", lambda: socket.create_connection(("127.0.0.1", ctx.tcp), timeout=0.2))
        udp = lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ctx.udp))
        attempt(out, "udp", udp)
        attempt(out, "unix", lambda: socket.socket(socket.AF_UNIX).connect(ctx.unix))
        attempt(out, "abstract", lambda: socket.socket(socket.AF_UNIX).connect(ctx.abstract))
        attempt(out, "pair", lambda: socket.socketpair())
        attempt(out, "http", lambda: urllib.request.urlopen(f"http://127.0.0.1:{ctx.tcp}/", timeout=0.2))
        return out
    """
    ctx = {"tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1], "unix": str(tmp_path / "s.sock")}
    ctx["abstract"] = f"\0reharness-{os.getpid()}"
    try:
        with attack(tmp_path, body, ctx) as (out, _):
            assert out.pop("http").startswith("URLError"), "urllib wraps the EPERM"
            assert all(denied(v) for v in out.values()), out
        for listener in (tcp, unix, abstract):
            with pytest.raises(BlockingIOError):
                listener.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(16)
    finally:
        for s in (tcp, udp, unix, abstract):
            s.close()


def test_25_no_processes_can_be_spawned(tmp_path: Path) -> None:
    body = """
    import subprocess, pty, multiprocessing
    def bomb():
        while True:
            if os.fork() == 0:
                os._exit(0)
    def hook(ctx, nb):
        out = {}
        attempt(out, "subprocess", lambda: subprocess.run(["id"]))
        attempt(out, "system", lambda: os.system("touch /tmp/TOKEN-system") or "zero-status")
        attempt(out, "fork", lambda: os.fork())
        spawn = lambda: os.posix_spawn("/usr/bin/touch", ["touch", "/tmp/TOKEN-spawn"], {})
        attempt(out, "posix_spawn", spawn)
        attempt(out, "pty", lambda: pty.spawn("id"))
        attempt(out, "multiprocessing", lambda: multiprocessing.Process(target=print).start())
        attempt(out, "fork_bomb", bomb)
        return out
    """
    with attack(tmp_path, body) as (out, _):
        system = out.pop("system")
        assert system.startswith("ok:") and system != "ok:'zero-status'", "system() reports failure"
        assert out.pop("pty").startswith(("PermissionError", "OSError"))
        assert all(denied(v) for v in out.values()), out


@x86_64_only
def test_26_signals_and_ptrace_cannot_reach_the_host(tmp_path: Path) -> None:
    body = """
    import ctypes, signal
    libc = ctypes.CDLL(None, use_errno=True)
    def raw(rc):
        if rc == -1:
            raise OSError(ctypes.get_errno(), "")
        return rc
    def hook(ctx, nb):
        out, ppid = {}, os.getppid()
        attempt(out, "kill_parent", lambda: os.kill(ppid, signal.SIGKILL))
        attempt(out, "probe_parent", lambda: os.kill(ppid, 0))
        attempt(out, "killpg", lambda: os.killpg(0, signal.SIGKILL))
        attempt(out, "ptrace", lambda: raw(libc.ptrace(16, ppid, None, None)))
        attempt(out, "vm_writev", lambda: raw(libc.syscall(311, ppid, None, 0, None, 0, 0)))
        return out
    """
    with attack(tmp_path, body) as (out, _):
        assert all(denied(v) for v in out.values()), out


@x86_64_only
def test_27_limits_cannot_be_raised_or_dropped(tmp_path: Path) -> None:
    body = """
    import ctypes, resource
    libc = ctypes.CDLL(None, use_errno=True)
    def raw(rc):
        if rc == -1:
            raise OSError(ctypes.get_errno(), "")
        return rc
    def hook(ctx, nb):
        out = {}
        attempt(out, "setrlimit", lambda: resource.setrlimit(resource.RLIMIT_AS, (-1, -1)))
        unlimited = (ctypes.c_uint64 * 2)(2**64 - 1, 2**64 - 1)
        attempt(out, "prlimit64", lambda: raw(libc.syscall(302, 0, 9, unlimited, None)))
        attempt(out, "nnp_off", lambda: raw(libc.prctl(38, 0, 0, 0, 0)))
        attempt(out, "pdeathsig_off", lambda: raw(libc.prctl(1, 0, 0, 0, 0)))
        attempt(out, "unshare", lambda: raw(libc.unshare(0x10000000)))
        attempt(out, "mount", lambda: raw(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
        out["as_after"] = str(resource.getrlimit(resource.RLIMIT_AS))
        out["nnp_after"] = str(libc.prctl(39, 0, 0, 0, 0))
        return out
    """
    with attack(tmp_path, body) as (out, _):
        assert out.pop("as_after") == str((1 << 30, 1 << 30)) and out.pop("nnp_after") == "1"
        assert out.pop("nnp_off") == "OSError:EINVAL", "no_new_privs cannot be unset"
        assert out.pop("setrlimit") == "ValueError", "CPython reports EPERM from setrlimit as ValueError"
        assert all(denied(v) for v in out.values()), out


@x86_64_only
def test_28_raw_syscall_tricks(tmp_path: Path) -> None:
    body = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def raw(rc):
        if rc == -1:
            raise OSError(ctypes.get_errno(), "")
        return rc
    def hook(ctx, nb):
        out, buf = {}, ctypes.create_string_buffer(256)
        attempt(out, "clone3", lambda: raw(libc.syscall(435, buf, 88)))
        attempt(out, "openat2", lambda: raw(libc.syscall(437, -100, b"/etc/passwd", buf, 24)))
        attempt(out, "io_uring_setup", lambda: raw(libc.syscall(425, 4, buf)))
        attempt(out, "execveat", lambda: raw(libc.syscall(322, -100, b"/usr/bin/id", None, None, 0)))
        attempt(out, "execve", lambda: raw(libc.syscall(59, b"/usr/bin/id", None, None)))
        return out
    """
    with attack(tmp_path, body) as (out, _):
        assert out.pop("clone3") == "OSError:ENOSYS" and out.pop("openat2") == "OSError:ENOSYS"
        assert all(denied(v) for v in out.values()), out


@x86_64_only
def test_28_foreign_abi_syscall_kills_the_worker(tmp_path: Path) -> None:
    src = """
    import ctypes, mmap
    def hook(ctx, nb):
        code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20 (getpid, i386); int 0x80; ret
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        return ctypes.CFUNCTYPE(ctypes.c_int)(address)()
    """
    err = contained_failure(hook(src), PatchCrash, tmp_path, limits=LIMITS)
    assert "SIGSYS" in str(err) or "SIGSEGV" in str(err)


@pytest.mark.parametrize(
    ("body", "expect", "needle"),
    [
        ("os._exit(3)", PatchCrash, "exited with code 3"),
        ("ctypes.string_at(0)", PatchCrash, "SIGSEGV"),
        (
            "os.close(int(sys.argv[2]))\n    while True:\n        pass",
            PatchProtocolError,
            "closed its reply pipe",
        ),
    ],
)
def test_28_crashes_map_to_typed_errors(
    body: str, expect: type[Exception], needle: str, tmp_path: Path
) -> None:
    src = f"import os, sys, ctypes\ndef hook(ctx, nb):\n    {body}\n"
    err = contained_failure(src, expect, tmp_path, limits=LIMITS)
    assert needle in str(err)


def test_29_reliability_guard_bypasses_do_not_help(tmp_path: Path) -> None:
    body = """
    import posix, importlib, builtins
    def hook(ctx, nb):
        out = {}
        os.system = None
        attempt(out, "posix_system", lambda: posix.system("touch /tmp/TOKEN-posix") or "zero-status")
        fresh = importlib.reload(os)
        attempt(out, "reloaded_system", lambda: fresh.system("touch /tmp/TOKEN-reload") or "zero-status")
        sys.modules["json"] = None
        builtins.print = None
        return out
    """
    with attack(tmp_path, body) as (out, _):
        assert all(v.startswith("ok:") and v != "ok:'zero-status'" for v in out.values()), out


def test_30_monkeypatching_the_runtime_leaves_the_protocol_intact(tmp_path: Path) -> None:
    src = hook(
        """
        import json, struct, sys, os, builtins, gc, atexit
        def hook(ctx, nb):
            json.dumps = json.loads = lambda *a, **k: "garbage"
            struct.pack = struct.unpack = lambda *a: b"garbage"
            sys.stdout = sys.stderr = None
            builtins.print = None
            os._exit = os.write = os.read = None
            main = sys.modules["__main__"]
            main.serve = main.call_hook = main.CtxView = main.error_info = None
            gc.callbacks.append(lambda phase, info: 1 / 0)
            atexit.register(lambda: open("/tmp/TOKEN-atexit", "w"))
            nb["n"] = nb.get("n", 0) + 1
            return {"n": nb["n"]}
        """
    )
    canary = Canary(tmp_path / "canary")
    with HookWorker({"p": src.replace("TOKEN", canary.token)}, LIMITS) as worker:
        assert [worker.call("p", {}, {"n": n}).value for n in range(3)] == [{"n": 1}, {"n": 2}, {"n": 3}]
        pid = worker.pid
    assert pid is not None and gone(pid)
    canary.check()


def test_30_finalizer_corrupting_the_channel_is_a_protocol_error(tmp_path: Path) -> None:
    src = hook(
        """
        import os, sys, gc
        class Bomb:
            def __del__(self):
                os.write(int(sys.argv[2]), b"\\xff\\xff\\xff\\x7f")
        def hook(ctx, nb):
            if ctx["arm"]:
                b = Bomb()
                b.me = b  # a cycle: collected later, by the gc.collect() of the next call
                return "armed"
            gc.collect()
            return "after"
        """
    )
    with HookWorker({"p": src}, LIMITS) as worker:
        assert worker.call("p", {"arm": True}, {}).value == "armed"
        with pytest.raises(PatchProtocolError, match="cap"):
            worker.call("p", {"arm": False}, {})
        assert worker.pid is None, "a worker that broke the protocol is killed"
        assert worker.call("p", {"arm": False}, {}).value == "after"


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        ("b'[' * 200000 + b']' * 200000", "nested too deeply"),
        ("""b'{"id": 1, "ok": true, "result": NaN, "nb": {}}'""", "NaN"),
        ("""b'{"id": 99, "ok": true, "result": 1, "nb": {}}'""", "does not match"),
        ("""b'{"id": 1, "ok": true, "result": ' + b'1' * 5000 + b', "nb": {}}'""", "not valid JSON"),
        ("bytes([255, 254])", "not valid JSON"),
        ("HUGE", "1073741824-byte frame"),
    ],
)
def test_30_forged_frames_are_refused_by_the_parent(frame: str, needle: str, tmp_path: Path) -> None:
    """A hook writes its own frame to the reply pipe: the parent's checks alone must hold (and kill it)."""
    if frame == "HUGE":
        write = "struct.pack('<I', 1 << 30) + b'x' * 65536"
    else:
        write = f"struct.pack('<I', len({frame})) + {frame}"
    src = f"import os, sys, struct\ndef hook(ctx, nb):\n    os.write(int(sys.argv[2]), {write})\n"
    src += "    while True:\n        pass\n"
    err = contained_failure(src, PatchProtocolError, tmp_path, limits=LIMITS)
    assert needle in str(err)


def test_31_environment_is_minimal_and_secrets_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-key")
    src = "import os\ndef hook(ctx, nb):\n    return dict(os.environ)\n"
    with HookWorker({"p": src}, LIMITS) as worker:
        env = worker.call("p", {}, {}).value
    assert "OPENAI_API_KEY" not in env and "canary-key" not in str(env)
    assert set(env) <= {"LANG", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "PYTHONHASHSEED", "LC_CTYPE"}


def test_32_no_cross_patch_contamination() -> None:
    dirty = hook(
        """
        import math
        SEEN = []
        def hook(ctx, nb):
            math.pi = 3
            SEEN.append(1)
            return [math.pi, len(SEEN)]
        """
    )
    clean = "import math\ndef hook(ctx, nb):\n    return math.pi\n"
    with HookWorker({"p": dirty}, LIMITS) as a:
        assert a.call("p", {}, {}).value == [3, 1] and a.call("p", {}, {}).value == [3, 2]
    with HookWorker({"p": clean}, LIMITS) as b:
        assert b.call("p", {}, {}).value == pytest.approx(3.14159, abs=1e-5)
    with HookWorker({"p": dirty}, LIMITS) as again:
        assert again.call("p", {}, {}).value == [3, 1], "a new worker for the same patch starts clean"


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("{1, 2}", "set is not JSON"),
        ("b'raw'", "bytes is not JSON"),
        ("range(3)", "range is not JSON"),
        ("[l for l in [[]] if not l.append(l)][0]", "Circular reference"),
        ("float('nan')", "Out of range float"),
        ("{'x': float('inf')}", "Out of range float"),
        ("'m' * (1 << 20)", "characters of text"),
        ("{'message': 'red\\x1b[31m\\x00'}", "control characters"),
        ("'\\ud800'", "lone surrogates"),
    ],
)
def test_33_output_shape_attacks_are_rejected(expr: str, needle: str) -> None:
    with HookWorker({"p": f"def hook(ctx, nb):\n    return {expr}\n"}, LIMITS) as worker:
        with pytest.raises(PatchProtocolError, match=needle):
            worker.call("p", {}, {})
        assert worker.failures == 1


def test_33_wrong_schema_passes_the_sandbox_and_fails_the_effect_schema() -> None:
    with HookWorker(
        {"before_action": "def hook(ctx, nb):\n    return {'type': 'force_action'}\n"}, LIMITS
    ) as w:
        value = w.call("before_action", {}, {}).value
    with pytest.raises(EffectError, match="non-empty string"):
        parse_effect("before_action", value)
