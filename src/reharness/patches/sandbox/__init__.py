"""The sandbox that runs untrusted hook code in a confined worker process (L2–L5).

:class:`HookWorker` is the entry point: one worker process per patch version, confined by the kernel layers
it can get (:mod:`reharness.core.sandbox.confine`), driven and policed by the parent (:mod:`.supervisor`).
See REFERENCE.md §6.

- :mod:`.supervisor`: the parent side (L5): :class:`HookWorker` runs one patch version's hooks in a worker;
- :mod:`.worker`: the worker: a standalone script that runs one patch version's hooks for its parent (L2);
- :mod:`.limits`: sandbox configuration (:class:`SandboxLimits`), one call's result (:class:`CallResult`);
- :mod:`.replies`: a worker's reply to one call: the validated result, or the typed error it stands for;
- :mod:`.report`: the isolation report of a worker and the isolation policy (``strict`` / ``standard``);
- :mod:`.r1_dialect`: the ``r1`` dialect inside the worker: Harness-R1's ctx class, namespace, line budget;
- :mod:`.inprocess`: the ``inprocess`` isolation level: hooks in the host interpreter (tests, debugging only).
"""

from reharness.patches.sandbox.limits import CallResult, SandboxLimits
from reharness.patches.sandbox.report import SandboxDegradedWarning
from reharness.patches.sandbox.supervisor import HookWorker

__all__ = ["CallResult", "HookWorker", "SandboxDegradedWarning", "SandboxLimits"]
