"""Patches: the ``reharness-patch-v1`` format, static validation (L1) and the sandbox for hook code."""

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
