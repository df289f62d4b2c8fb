"""Patches: the ``reharness-patch-v1`` format, static validation (L1) and the sandbox for hook code.

- :mod:`.model`: :class:`Patch` and its two document formats (``reharness-patch-v1`` and Harness-R1's);
- :mod:`.documents`: safe parsing of patch documents (JSON or YAML text, or a file) into plain data;
- :mod:`.reply`: extraction of a patch from an engineer's reply (``<think>…</think><patch>{json}</patch>``);
- :mod:`.errors`: typed patch errors with stable codes;
- :mod:`.policy`: what patch code may use: the allow-lists and limits of static validation;
- :mod:`.validate`: static validation (L1): the public entry points;
- :mod:`.validate_ast`: the AST rules of static validation for one hook's source;
- :mod:`.leakage`: leakage checks: patch constants must not copy task-specific facts from the evidence;
- :mod:`.overlay`: a patch's hooks run through the sandbox as a runtime overlay;
- :mod:`.sandbox`: the sandbox that runs untrusted hook code in a confined worker process (L2–L5);
- :mod:`.r1`: Harness-R1 (``r1`` dialect) support: the official validator and conversion.
"""

from reharness.patches.errors import PatchFormatError, PatchValidationError
from reharness.patches.leakage import LeakageEvidence
from reharness.patches.model import (
    ENV_NAMES,
    HARNESS_R1_SCHEMA,
    SCHEMA_VERSION,
    Patch,
    load_patch,
    patch_from_text,
)
from reharness.patches.policy import ALLOWED_MODULES, SAFE_BUILTINS, ValidationLimits
from reharness.patches.reply import extract_patch
from reharness.patches.validate import (
    ValidationReport,
    check_patch,
    validate_file,
    validate_hook_source,
    validate_patch,
)

__all__ = [
    "ALLOWED_MODULES",
    "ENV_NAMES",
    "HARNESS_R1_SCHEMA",
    "SAFE_BUILTINS",
    "SCHEMA_VERSION",
    "LeakageEvidence",
    "Patch",
    "PatchFormatError",
    "PatchValidationError",
    "ValidationLimits",
    "ValidationReport",
    "check_patch",
    "extract_patch",
    "load_patch",
    "patch_from_text",
    "validate_file",
    "validate_hook_source",
    "validate_patch",
]
