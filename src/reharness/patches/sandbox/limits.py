"""Sandbox configuration (:class:`SandboxLimits`), the result of one call (:class:`CallResult`) and defaults.

The default builtins and modules are a fallback: the static validator (L1) owns the policy, and the sandbox
receives its lists so that the worker admits exactly what the validator allows — no more, even when L1 is
bypassed. The worker is standalone, so the lists travel to it in the ``config`` frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reharness.core.errors import ConfigError
from reharness.patches.policy import ALLOWED_MODULES, R1_BUILTINS, R1_LINE_BUDGET, SAFE_BUILTINS

Isolation = Literal["strict", "standard", "inprocess"]
Dialect = Literal["reharness", "r1"]
#: Layers whose probe ``SandboxLimits(disable_layers=...)`` can force to fail (tests of degraded hosts).
LAYERS = ("rlimits", "no_new_privs", "landlock", "seccomp")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Pure builtins a hook may use (about Harness-R1's whitelist); ``__import__`` is always the restricted one.
#: Builtins a hook may use: L1's list (one source of truth, ``reharness.patches.policy``) plus the standard
#: exception classes, which are harmless names and let hooks test what a failed call raised.
DEFAULT_SAFE_BUILTINS: frozenset[str] = frozenset(SAFE_BUILTINS) | _words(
    """
    Exception ArithmeticError AssertionError AttributeError IndexError KeyError LookupError RuntimeError
    StopIteration TypeError ValueError ZeroDivisionError
    """
)
#: Pure modules a hook may import: exactly L1's allow-list.
DEFAULT_ALLOWED_MODULES: frozenset[str] = frozenset(ALLOWED_MODULES)


@dataclass(frozen=True)
class SandboxLimits:
    """Limits and policy of one sandbox worker (all enforced from the parent unless noted)."""

    #: Wall-clock deadline of one hook call (and of loading the patch); SIGKILL of the worker when it expires.
    call_timeout_s: float = 0.5
    #: Deadline for the worker to start and report its confinement.
    start_timeout_s: float = 5.0
    #: RLIMIT_AS of the worker.
    memory_bytes: int = 1 << 30
    #: RLIMIT_CPU of the worker (cumulative: the parent recycles a worker before a call could exhaust it).
    cpu_seconds: int = 60
    #: Largest frame in either direction; a bigger header from the worker kills it.
    max_frame_bytes: int = 8 << 20
    #: Total characters of text (strings and keys) in a hook's return value.
    max_result_chars: int = 64 << 10
    #: Total items (list elements and dict entries) in a hook's return value.
    max_result_items: int = 10_000
    #: Nesting depth of the return value and of ``nb``.
    max_depth: int = 32
    #: Captured stdout/stderr characters per call.
    max_stdout_chars: int = 4096
    #: Traceback characters reported per failing call.
    max_traceback_chars: int = 4096
    #: Circuit breaker: after this many timeouts, crashes, memory or protocol errors every call is disabled.
    max_failures: int = 3
    #: RLIMIT_NOFILE of the worker.
    max_open_files: int = 64
    #: Recycle the worker after this many calls (``None``: only on CPU budget or failure).
    max_calls: int | None = None
    isolation: Isolation = "standard"
    #: Builtin names hooks may use (``None``: :data:`DEFAULT_SAFE_BUILTINS`).
    allowed_builtins: frozenset[str] | None = None
    #: Modules hooks may import (``None``: :data:`DEFAULT_ALLOWED_MODULES`); pre-imported before confinement.
    allowed_modules: frozenset[str] | None = None
    #: ``PYTHONHASHSEED`` of the worker, so set/dict-of-str iteration order is the same after a respawn
    #: (``None``: random seed, and the worker runs with ``-I``).
    hash_seed: int | None = 0
    #: Tests only: pretend these layers' probes failed (see :data:`LAYERS`).
    disable_layers: frozenset[str] = field(default_factory=frozenset)
    #: What hooks see: ``reharness`` (read-only view, imports of allowed modules) or ``r1`` (Harness-R1's
    #: dict-subclass ctx, its 25 builtins, pre-injected ``re``/``math``/``SequenceMatcher``, no imports).
    dialect: Dialect = "reharness"
    #: Python lines a call may run (``None``: the dialect's default — 2000 for ``r1``, unlimited otherwise).
    line_budget: int | None = None

    def __post_init__(self) -> None:
        if self.isolation not in ("strict", "standard", "inprocess"):
            raise ConfigError(
                f"unknown isolation level {self.isolation!r}", hint="use 'strict', 'standard' or 'inprocess'"
            )
        for name in ("call_timeout_s", "start_timeout_s", "memory_bytes", "cpu_seconds", "max_frame_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"SandboxLimits.{name} must be positive, got {getattr(self, name)!r}")
        if self.max_failures < 1:
            raise ConfigError("SandboxLimits.max_failures must be at least 1")
        if self.dialect not in ("reharness", "r1"):
            raise ConfigError(f"unknown patch dialect {self.dialect!r}", hint="use 'reharness' or 'r1'")
        unknown = set(self.disable_layers) - set(LAYERS)
        if unknown:
            raise ConfigError(f"unknown sandbox layers {sorted(unknown)}", hint=f"known: {', '.join(LAYERS)}")

    @property
    def builtins(self) -> frozenset[str]:
        if self.allowed_builtins is not None:
            return frozenset(self.allowed_builtins)
        return frozenset(R1_BUILTINS) if self.dialect == "r1" else DEFAULT_SAFE_BUILTINS

    @property
    def modules(self) -> frozenset[str]:
        if self.allowed_modules is not None:
            return frozenset(self.allowed_modules)
        return frozenset() if self.dialect == "r1" else DEFAULT_ALLOWED_MODULES

    @property
    def lines(self) -> int | None:
        """The line budget in force (see :attr:`line_budget`)."""
        if self.line_budget is not None:
            return self.line_budget
        return R1_LINE_BUDGET if self.dialect == "r1" else None


@dataclass
class CallResult:
    """One successful hook call: the raw return value, the notebook after the call, captured output, time."""

    value: Any
    nb: dict[str, Any]
    stdout: str = ""
    duration_s: float = 0.0
