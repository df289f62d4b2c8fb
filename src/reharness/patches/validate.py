"""Static validation (L1) of patches: the public entry points.

:func:`validate_patch` returns every :class:`~reharness.patches.errors.PatchValidationError` of a
:class:`~reharness.patches.model.Patch` (an empty list means valid), :func:`check_patch` raises the first one,
:func:`validate_hook_source` checks one hook's code (``str``, or ``bytes`` that must be UTF-8), and
:func:`validate_file` loads and validates a patch file into a :class:`ValidationReport` whose ``to_dict`` is
the ``reharness patch check --json`` contract ``{valid, errors: [{code, line, col, message}], hooks}``.

Lines and columns are 1-based (columns count characters); ``line == 0`` means the error concerns the whole
patch or document rather than a position in one hook's code. The rules themselves live in
:mod:`reharness.patches.validate_ast`, the allow-lists in :mod:`reharness.patches.policy` and the leakage
check in :mod:`reharness.patches.leakage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reharness.patches.errors import PatchFormatError, PatchValidationError
from reharness.patches.leakage import LeakageEvidence
from reharness.patches.model import Patch, load_patch
from reharness.patches.policy import ValidationLimits
from reharness.patches.validate_ast import check_source

_DEFAULT_LIMITS = ValidationLimits()


def validate_hook_source(
    source: str | bytes,
    *,
    hook: str | None = None,
    limits: ValidationLimits = _DEFAULT_LIMITS,
    evidence: LeakageEvidence | None = None,
) -> list[PatchValidationError]:
    """Every static rule violation of one hook's code; ``bytes`` must be UTF-8 (checked before parsing)."""
    if isinstance(source, bytes):
        if len(source) > 4 * limits.max_hook_chars:  # certainly over the character limit: do not decode
            msg = f"the code is {len(source)} bytes; the limit is {limits.max_hook_chars} characters per hook"
            return [PatchValidationError("too_large", msg, line=1, col=1, hook=hook)]
        raw = source
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            col = len(raw[raw.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8")) + 1  # characters
            msg = f"the code is not valid UTF-8 (byte {exc.start}); save it as UTF-8"
            return [PatchValidationError("invalid_utf8", msg, line=line, col=col, hook=hook)]
    return check_source(source, hook=hook, limits=limits, evidence=evidence)


def validate_patch(
    patch: Patch, *, limits: ValidationLimits = _DEFAULT_LIMITS, evidence: LeakageEvidence | None = None
) -> list[PatchValidationError]:
    """Every static rule violation of ``patch``, hook by hook in hook-point order; empty means valid.

    An ``r1``-dialect patch is checked by Harness-R1's own rules (:mod:`reharness.patches.r1.validate`).
    """
    if patch.dialect == "r1":
        return _validate_r1(patch, limits)
    if not patch.hooks:
        msg = "the patch has no hooks; add code for at least one hook point"
        return [PatchValidationError("empty_patch", msg, line=0, col=0)]
    total = sum(len(code.encode("utf-8")) for code in patch.hooks.values())
    if total > limits.max_total_bytes:
        msg = (
            f"the hooks' code totals {total} bytes; the limit is {limits.max_total_bytes}; shorten the hooks"
        )
        return [PatchValidationError("too_large", msg, line=0, col=0)]
    errors: list[PatchValidationError] = []
    for point, code in patch.hooks.items():
        errors.extend(validate_hook_source(code, hook=point, limits=limits, evidence=evidence))
        if len(errors) >= limits.max_errors:
            return errors[: limits.max_errors]
    return errors


def _validate_r1(patch: Patch, limits: ValidationLimits) -> list[PatchValidationError]:
    from reharness.patches.r1.validate import check_r1_description, check_r1_hook
    from reharness.patches.sandbox.r1_dialect import BLOCK_SEPARATOR, split_blocks

    if not patch.hooks:
        return [PatchValidationError("empty_patch", "Harness-R1 needs at least one hook", line=0, col=0)]
    errors = check_r1_description(patch.description)
    for point, code in patch.hooks.items():
        start = 0
        for raw, block in zip(code.split(BLOCK_SEPARATOR), split_blocks(code), strict=True):
            # a repeated hook: each block is compiled on its own upstream; its error lines are shifted to
            # where the block stands in the joined source (after any blank lines split_blocks dropped)
            offset = code[:start].count("\n") + (len(raw) - len(raw.lstrip("\n")))
            for error in check_r1_hook(block, hook=point, benchmark=patch.env):
                errors.append(
                    PatchValidationError(
                        error.rule, error.message, line=error.line + offset, col=error.col, hook=error.hook
                    )
                )
            start += len(raw) + len(BLOCK_SEPARATOR)
    return errors[: limits.max_errors]


def check_patch(
    patch: Patch, *, limits: ValidationLimits = _DEFAULT_LIMITS, evidence: LeakageEvidence | None = None
) -> Patch:
    """Return ``patch`` if it passes static validation; raise its first :class:`PatchValidationError`."""
    errors = validate_patch(patch, limits=limits, evidence=evidence)
    if errors:
        raise errors[0]
    return patch


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of loading and validating a patch file; ``patch`` is ``None`` when it could not be loaded."""

    patch: Patch | None
    errors: tuple[PatchValidationError, ...]

    @property
    def valid(self) -> bool:
        return self.patch is not None and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": [e.to_dict() for e in self.errors],
            "hooks": list(self.patch.hooks) if self.patch is not None else [],
        }


def validate_file(
    path: str | Path,
    *,
    limits: ValidationLimits = _DEFAULT_LIMITS,
    evidence: LeakageEvidence | None = None,
    dialect: str | None = None,
) -> ValidationReport:
    """Load ``path`` (either schema, JSON or YAML) and validate it; format errors become report errors."""
    try:
        patch = load_patch(path, dialect=dialect)
    except PatchFormatError as exc:
        message = exc.message + (f"; {exc.hint}" if exc.hint else "")
        return ValidationReport(None, (PatchValidationError(exc.code, message, line=0, col=0),))
    return ValidationReport(patch, tuple(validate_patch(patch, limits=limits, evidence=evidence)))
