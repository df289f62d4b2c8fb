"""Typed patch errors with stable codes.

Static validation failures are :class:`PatchValidationError` (a stable ``code`` plus line and column).
Everything that can go wrong when untrusted hook code runs maps to one :class:`PatchExecutionError` subclass
whose ``type`` is one of :data:`EXECUTION_ERROR_TYPES`; inside an episode such an error means "the hook had no
effect" and is recorded in the trajectory (``hook_errors[].error_type``).
"""

from __future__ import annotations

from typing import Any

from reharness.core.errors import ReharnessError

#: The error ``type`` strings reported by ``reharness patch try`` and stored in trajectories.
EXECUTION_ERROR_TYPES = (
    "timeout",
    "memory",
    "crash",
    "runtime_error",
    "protocol_error",
    "invalid_effect",
    "disabled",
    "sandbox_unavailable",
)


class PatchError(ReharnessError):
    """Base class of patch errors."""

    code = "patch_error"


class PatchFormatError(PatchError):
    """A patch file or reply is not a well-formed patch document (before any code is looked at)."""

    code = "patch_format"


class PatchValidationError(PatchError):
    """Static (L1) rejection of patch code: a stable code, the position and how to fix it."""

    code = "patch_invalid"

    def __init__(self, code: str, message: str, line: int = 0, col: int = 0, hook: str | None = None) -> None:
        self.rule = code
        self.line = line
        self.col = col
        self.hook = hook
        where = f"{hook or 'patch'}:{line}:{col}"
        super().__init__(f"{where}: {message}", code=code)
        self.message = message

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.rule,
            "line": self.line,
            "col": self.col,
            "message": self.message,
        }
        if self.hook:
            out["hook"] = self.hook
        return out


class PatchExecutionError(PatchError):
    """Running hook code failed; ``type`` is one of :data:`EXECUTION_ERROR_TYPES`."""

    type = "runtime_error"
    code = "patch_runtime_error"


class PatchTimeout(PatchExecutionError):
    type = "timeout"
    code = "patch_timeout"


class PatchMemoryError(PatchExecutionError):
    type = "memory"
    code = "patch_memory"


class PatchCrash(PatchExecutionError):
    type = "crash"
    code = "patch_crash"


class PatchRuntimeError(PatchExecutionError):
    type = "runtime_error"
    code = "patch_runtime_error"
    #: The notebook as the failing hook left it, when the dialect keeps such writes (``r1``), else None.
    nb: dict[str, Any] | None = None


class PatchProtocolError(PatchExecutionError):
    type = "protocol_error"
    code = "patch_protocol_error"


class PatchDisabled(PatchExecutionError):
    type = "disabled"
    code = "patch_disabled"


class PatchSandboxUnavailable(PatchExecutionError):
    type = "sandbox_unavailable"
    code = "patch_sandbox_unavailable"
