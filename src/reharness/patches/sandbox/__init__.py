"""The sandbox that runs untrusted hook code in a confined worker process (L2–L5).

:class:`HookWorker` is the entry point: one worker process per patch version, confined by the kernel layers
it can get (``confine.py``), driven and policed by the parent (``supervisor.py``). See REFERENCE.md §6.
"""

from reharness.patches.sandbox.limits import CallResult, SandboxLimits
from reharness.patches.sandbox.report import SandboxDegradedWarning
from reharness.patches.sandbox.supervisor import HookWorker

__all__ = ["CallResult", "HookWorker", "SandboxDegradedWarning", "SandboxLimits"]
