"""Kernel confinement a sandbox worker applies to itself (L3): each layer probed, applied and reported.

Order matters (REFERENCE.md §6 §5.3): rlimits → ``no_new_privs`` → Landlock → seccomp, so each step may still
use the syscalls the next one denies. :func:`set_pdeathsig` runs first of all, before the config is read.

Callers: the patch sandbox's hook worker and an environment's code interpreter (nothing writable, both
through :func:`.workerlib.load_confine`), and an environment's test runner, whose
``config["writable"]`` directory (the scratch copy of the repository under test) is writable beneath it
through Landlock; seccomp then allows the file-writing syscalls, but only when Landlock confines them to
that directory (without Landlock every write stays denied). The module lives in ``core.sandbox`` so the
``patches`` and ``envs`` layers can both use it.

This module is loaded by the standalone worker (``python -I -S -B worker.py``) and therefore imports only the
standard library. Landlock has no libc wrapper and no stdlib binding, so it is called through raw
``syscall(2)``; seccomp goes through the system ``libseccomp.so.2`` with ``ctypes`` because the PyPI bindings
(``pyseccomp``, ``seccomp``) are optional extras we must not require. Every layer degrades independently: a
missing layer is reported with its reason, never raised, and the parent decides (``strict`` refuses to run).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39

# Landlock (include/uapi/linux/landlock.h); the syscall numbers are shared by all architectures.
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # EXECUTE … MAKE_SYM
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

# libseccomp (seccomp.h)
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_FLTATR_ACT_BADARCH = 2
_SCMP_CMP_NE = 1
_SCMP_CMP_EQ = 4
_SCMP_CMP_MASKED_EQ = 7


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: Denied with EPERM (REFERENCE.md §6 §5.3, plus scheduling/memory-locking calls root could use against the
#: host, and the calls that would move the worker out of its process group or clear its death signal).
DENIED_SYSCALLS: tuple[str, ...] = _words(
    """
    socket socketpair connect bind listen accept accept4 execve execveat fork vfork clone ptrace
    process_vm_readv process_vm_writev process_madvise kcmp kill tkill tgkill pidfd_open
    pidfd_send_signal pidfd_getfd rt_sigqueueinfo rt_tgsigqueueinfo setrlimit unshare
    setns mount umount2 pivot_root chroot fsopen fsconfig fsmount fspick move_mount open_tree
    mount_setattr bpf perf_event_open keyctl add_key request_key userfaultfd io_uring_setup
    io_uring_enter io_uring_register personality setuid setgid setreuid setregid setresuid setresgid
    setfsuid setfsgid setgroups capset init_module finit_module delete_module kexec_load
    kexec_file_load reboot swapon swapoff open_by_handle_at name_to_handle_at mknod mknodat unlink
    unlinkat rename renameat renameat2 rmdir mkdir mkdirat link linkat symlink symlinkat chmod
    fchmod fchmodat fchmodat2 chown fchown lchown fchownat truncate ftruncate utime utimes utimensat
    futimesat settimeofday clock_settime clock_adjtime adjtimex setsid setpgid sched_setscheduler
    sched_setattr setpriority ioprio_set mlock mlock2 mlockall iopl ioperm syslog acct quotactl
    quotactl_fd sethostname setdomainname fanotify_init uselib vhangup creat
    """
)
#: The file-writing calls a runner with a writable directory needs; Landlock keeps them beneath it.
FILE_WRITE_SYSCALLS = frozenset(
    _words(
        "unlink unlinkat rename renameat renameat2 rmdir mkdir mkdirat truncate ftruncate utime utimes "
        "utimensat"
    )
)
#: Answered with ENOSYS so that libc falls back to calls we can filter by argument.
ENOSYS_SYSCALLS = ("clone3", "openat2")


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: Any = None


def _c() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
        _libc.prctl.restype = ctypes.c_int
    return _libc


def _prctl(option: int, arg: int = 0) -> int:
    ulong = ctypes.c_ulong
    return int(_c().prctl(ctypes.c_int(option), ulong(arg), ulong(0), ulong(0), ulong(0)))


def _err(what: str) -> str:
    code = ctypes.get_errno()
    return f"{what}: {errno.errorcode.get(code, code)} ({os.strerror(code)})"


def set_pdeathsig(expected_ppid: int) -> bool:
    """Ask for SIGKILL when the spawning thread dies; exit at once if the parent is already gone."""
    ok = _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    if os.getppid() != expected_ppid:  # the parent died before the prctl took effect
        os._exit(70)
    return ok


def apply_rlimits(
    memory_bytes: int, cpu_seconds: int, max_open_files: int, fsize_bytes: int = 0
) -> dict[str, Any]:
    """Set the resource limits (soft == hard, except CPU where soft < hard gives a distinctive SIGXCPU)."""
    wanted = {
        "as": (resource.RLIMIT_AS, memory_bytes, memory_bytes),
        "cpu": (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
        "nofile": (resource.RLIMIT_NOFILE, max_open_files, max_open_files),
        "fsize": (resource.RLIMIT_FSIZE, fsize_bytes, fsize_bytes),
        "core": (resource.RLIMIT_CORE, 0, 0),
        # Per-UID and ignored for root (REFERENCE.md §6 §4 item 2): only a hint, seccomp is what stops fork.
        "nproc": (resource.RLIMIT_NPROC, 0, 0),
    }
    applied: dict[str, Any] = {}
    for name, (res, soft, hard) in wanted.items():
        try:
            resource.setrlimit(res, (soft, hard))
            applied[name] = soft
        except (OSError, ValueError) as exc:
            applied[name] = f"failed: {exc}"
    return applied


def set_no_new_privs() -> bool:
    return _prctl(_PR_SET_NO_NEW_PRIVS, 1) == 0 and _prctl(_PR_GET_NO_NEW_PRIVS) == 1


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers (0 when Landlock is missing or disabled)."""
    version = _c().syscall(
        ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(0, int(version))


def readable_paths() -> list[str]:
    """What stays readable: the interpreter's prefixes and stdlib (lazy imports) and the shared libraries."""
    candidates = [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.__file__),
    ]
    candidates += [p for p in sys.path if p]
    candidates += ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache"]
    seen: list[str] = []
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.exists(real) and real not in seen:
            seen.append(real)
    return seen


def apply_landlock(abi: int, paths: list[str], writable: tuple[str, ...] = ()) -> dict[str, Any]:
    """Read-only access beneath ``paths``, full access beneath ``writable`` (nothing else writable), no TCP
    (ABI ≥ 4), scoped signals (ABI ≥ 6)."""
    handled_fs = _FS_ABI1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    handled_fs |= _FS_IOCTL_DEV if abi >= 5 else 0
    attr = _RulesetAttr(handled_fs, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    libc = _c()
    ruleset_fd = int(
        libc.syscall(
            ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
            ctypes.byref(attr),
            ctypes.c_size_t(size),
            ctypes.c_uint32(0),
        )
    )
    if ruleset_fd < 0:
        return {"landlock": False, "reason": _err("landlock_create_ruleset")}
    try:
        for path in [*paths, *writable]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = os.path.isdir(path)
                access = _FS_READ_FILE | _FS_EXECUTE | (_FS_READ_DIR if is_dir else 0)
                if path in writable:
                    access = handled_fs & ~_FS_IOCTL_DEV if is_dir else access
                rule = _PathBeneathAttr(access, fd)
                rc = libc.syscall(
                    ctypes.c_long(_SYS_LANDLOCK_ADD_RULE),
                    ctypes.c_int(ruleset_fd),
                    ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
                if rc != 0:
                    return {"landlock": False, "reason": _err(f"landlock_add_rule({path})")}
            finally:
                os.close(fd)
        rc = libc.syscall(
            ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)
        )
        if rc != 0:
            return {"landlock": False, "reason": _err("landlock_restrict_self")}
    finally:
        os.close(ruleset_fd)
    report = {"landlock": True, "landlock_net": abi >= 4, "landlock_scoped": abi >= 6, "readable": paths}
    return report | ({"writable": list(writable)} if writable else {})


def load_libseccomp() -> Any:
    """``dlopen`` the system libseccomp (before Landlock narrows what can be read); ``None`` if missing."""
    try:
        return ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None


def apply_seccomp(lib: Any, allow_writes: bool = False) -> dict[str, Any]:
    """Load the deny-list filter (default ALLOW) through the system libseccomp; ``allow_writes`` lifts the
    file-writing denials (only when Landlock already confines writes to one directory)."""
    if lib is None:
        return {"seccomp": False, "reason": "libseccomp.so.2 is not installed (apt install libseccomp2)"}
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return {"seccomp": False, "reason": "seccomp_init failed"}
    skipped: list[str] = []

    def rule(action: int, syscall: str, *cmps: tuple[int, int, int, int]) -> None:
        nr = lib.seccomp_syscall_resolve_name(syscall.encode())
        if nr < 0:
            skipped.append(syscall)  # not a syscall on this architecture
            return
        args = (_ArgCmp * max(1, len(cmps)))(*[_ArgCmp(*c) for c in cmps])
        rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), args)
        if rc != 0:
            raise OSError(-rc, f"seccomp_rule_add({syscall}) failed: {os.strerror(-rc)}")

    eperm = 0x00050000 | errno.EPERM
    try:
        lib.seccomp_attr_set(ctx, _SCMP_FLTATR_ACT_BADARCH, _SCMP_ACT_KILL_PROCESS)  # int 0x80, x32 …
        for syscall in DENIED_SYSCALLS:
            if not (allow_writes and syscall in FILE_WRITE_SYSCALLS):
                rule(eperm, syscall)
        for syscall in ENOSYS_SYSCALLS:
            rule(0x00050000 | errno.ENOSYS, syscall)
        rule(eperm, "prctl", (0, _SCMP_CMP_EQ, _PR_SET_PDEATHSIG, 0))
        # prlimit64 may only read this process's limits (getrlimit uses it): no new limit, no other pid.
        rule(eperm, "prlimit64", (2, _SCMP_CMP_NE, 0, 0))
        rule(eperm, "prlimit64", (0, _SCMP_CMP_NE, 0, 0))
        # Never open for writing (Landlock already says so where it exists; this covers kernels without it).
        for flag in () if allow_writes else (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND):
            rule(eperm, "open", (1, _SCMP_CMP_MASKED_EQ, flag, flag))
            rule(eperm, "openat", (2, _SCMP_CMP_MASKED_EQ, flag, flag))
        rc = lib.seccomp_load(ctx)
        if rc != 0:
            return {"seccomp": False, "reason": f"seccomp_load failed: {os.strerror(-rc)}"}
    except OSError as exc:
        return {"seccomp": False, "reason": str(exc)}
    finally:
        lib.seccomp_release(ctx)
    return {"seccomp": True, "seccomp_skipped": skipped}


def _guarded(apply: Callable[[], dict[str, Any]], layer: str) -> dict[str, Any]:
    """Probe-and-degrade: an unexpected failure while applying a layer is reported, never fatal."""
    try:
        return apply()
    except Exception as exc:
        return {layer: False, "reason": f"{type(exc).__name__}: {exc}"}


def confine(config: dict[str, Any]) -> dict[str, Any]:
    """Apply every layer in order; ``config["disable"]`` simulates failed probes (tests of degraded hosts).

    Optional keys: ``writable`` (directories writable beneath, needs Landlock) and ``fsize_bytes`` (the
    largest file a write may produce; 0 by default)."""
    disabled = set(config.get("disable", ()))
    writable = tuple(os.path.realpath(p) for p in config.get("writable", ()))
    libseccomp = None if "seccomp" in disabled else load_libseccomp()
    report: dict[str, Any] = {"landlock": False, "landlock_abi": 0, "landlock_net": False}
    report |= {"landlock_scoped": False, "seccomp": False, "namespaces": False, "reasons": {}}
    reasons: dict[str, str] = report["reasons"]
    reasons["namespaces"] = "not attempted (optional layer L4)"
    simulated = "disabled by configuration (simulated probe failure)"

    if "rlimits" in disabled:
        report["rlimits"], reasons["rlimits"] = {}, simulated
    else:
        limits = apply_rlimits(
            config["memory_bytes"],
            config["cpu_seconds"],
            config["max_open_files"],
            int(config.get("fsize_bytes", 0)),
        )
        report["rlimits"] = limits
        failed = [k for k, v in limits.items() if isinstance(v, str) and k != "nproc"]
        if failed:
            reasons["rlimits"] = f"could not set {', '.join(failed)}"
    if "no_new_privs" in disabled:
        report["no_new_privs"], reasons["no_new_privs"] = False, simulated
    else:
        report["no_new_privs"] = set_no_new_privs()
        if not report["no_new_privs"]:
            reasons["no_new_privs"] = _err("prctl(PR_SET_NO_NEW_PRIVS)")
    abi = 0 if "landlock" in disabled else landlock_abi()
    report["landlock_abi"] = abi
    if "landlock" in disabled:
        reasons["landlock"] = simulated
    elif abi < 1:
        reasons["landlock"] = "the kernel offers no Landlock ABI (not built in, or not in the LSM list)"
    elif not report["no_new_privs"]:
        reasons["landlock"] = "needs no_new_privs"
    else:
        result = _guarded(lambda: apply_landlock(abi, readable_paths(), writable), "landlock")
        report["landlock"] = result.pop("landlock")
        if "reason" in result:
            reasons["landlock"] = result.pop("reason")
        report |= result
    if "seccomp" in disabled:
        reasons["seccomp"] = simulated
    else:
        allow_writes = bool(writable) and bool(report["landlock"])
        result = _guarded(lambda: apply_seccomp(libseccomp, allow_writes), "seccomp")
        report["seccomp"] = result.pop("seccomp")
        if "reason" in result:
            reasons["seccomp"] = result.pop("reason")
        report |= result
    return report
