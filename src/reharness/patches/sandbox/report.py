"""The isolation report of a worker and the isolation policy applied to it (``strict`` / ``standard``).

The worker sends what it achieved in its ``hello`` frame, before any patch code has reached it, so the report
can be trusted and ``strict`` can refuse a worker without ever sending it code.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from reharness.patches.errors import PatchSandboxUnavailable

#: Layers a fully confined worker has; ``standard`` warns when one is missing.
REQUIRED_LAYERS = ("rlimits", "no_new_privs", "pdeathsig", "landlock", "seccomp")
#: Layers ``strict`` cannot do without.
STRICT_LAYERS = ("landlock", "seccomp")
_WARNED: set[tuple[str, ...]] = set()


class SandboxDegradedWarning(RuntimeWarning):
    """The host could not apply every confinement layer; the worker runs with the rest (``standard``)."""


def summarise(caps: Mapping[str, Any], isolation: str) -> dict[str, Any]:
    """The isolation report of a worker from the capabilities it sent in its ``hello`` frame."""
    rlimits = caps.get("rlimits") or {}
    essential = ("as", "cpu", "nofile", "fsize", "core")
    layers = {
        "rlimits": bool(rlimits) and all(isinstance(rlimits.get(k), int) for k in essential),
        "no_new_privs": bool(caps.get("no_new_privs")),
        "pdeathsig": bool(caps.get("pdeathsig")),
        "landlock": bool(caps.get("landlock")),
        "seccomp": bool(caps.get("seccomp")),
    }
    return {
        "isolation": isolation,
        "sandboxed": True,
        **layers,
        "landlock_abi": caps.get("landlock_abi", 0),
        "landlock_net": bool(caps.get("landlock_net")),
        "landlock_scoped": bool(caps.get("landlock_scoped")),
        "namespaces": bool(caps.get("namespaces")),
        "rlimit_values": dict(rlimits),
        "missing": [name for name in REQUIRED_LAYERS if not layers[name]],
        "reasons": dict(caps.get("reasons") or {}),
        "missing_modules": list(caps.get("missing_modules") or []),
        "python": caps.get("python"),
    }


def inprocess_report() -> dict[str, Any]:
    return {"isolation": "inprocess", "sandboxed": False, "started": True} | dict.fromkeys(
        REQUIRED_LAYERS, False
    )


def enforce(report: Mapping[str, Any]) -> None:
    """``strict``: raise unless Landlock and seccomp are active; ``standard``: warn once per missing set."""
    reasons = report["reasons"]
    if report["isolation"] == "strict":
        absent = [name for name in STRICT_LAYERS if not report[name]]
        if absent:
            why = "; ".join(f"{name}: {reasons.get(name, 'unavailable')}" for name in absent)
            raise PatchSandboxUnavailable(
                f"isolation 'strict' needs Landlock and seccomp, but {', '.join(absent)} could not be "
                f"applied ({why})",
                hint="use a kernel with Landlock and seccomp (and libseccomp.so.2), or isolation='standard'",
            )
        return
    key = tuple(report["missing"])
    if key and key not in _WARNED:
        _WARNED.add(key)
        why = "; ".join(f"{name}: {reasons.get(name, '?')}" for name in key)
        warnings.warn(
            f"sandbox running without {', '.join(key)} ({why}); the process boundary and the parent-side "
            "deadline still hold",
            SandboxDegradedWarning,
            stacklevel=5,
        )
