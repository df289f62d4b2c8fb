"""The SWE-bench / SWE-Gym instance schema, as a typed record.

A :class:`CodeInstance` carries exactly the fields of a SWE-bench row (``instance_id``, ``repo``,
``base_commit``, ``problem_statement``, ``patch``, ``test_patch``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, plus
the optional ``hints_text``, ``created_at``, ``version``, ``environment_setup_commit``) and, for generated
instances, the repository itself (``files``: path → text), whose content hash is the ``base_commit``. Real
instances leave ``files`` empty; their repository is a directory the user supplies (:mod:`.loader`).
``FAIL_TO_PASS`` / ``PASS_TO_PASS`` accept both a list and SWE-bench's JSON-encoded string of a list.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reharness.core.hashing import stable_hash

#: The fields a SWE-bench instance file must have (the rest are optional).
REQUIRED_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "problem_statement",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)


def tree_hash(files: dict[str, str]) -> str:
    """The content hash of a file tree: the ``base_commit`` of a generated repository (40 hex digits)."""
    return stable_hash(sorted(files.items()), length=40)


class CodeInstance(BaseModel):
    """One SWE-bench-schema instance (see module docstring)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str = Field(description="the gold patch (unified diff, source files only)")
    test_patch: str = Field(description="the diff that adds the tests revealing the bug")
    FAIL_TO_PASS: list[str] = Field(description="test ids that fail before the fix and must pass after it")
    PASS_TO_PASS: list[str] = Field(description="test ids that pass before and must still pass after it")
    hints_text: str = ""
    created_at: str = ""
    version: str = ""
    environment_setup_commit: str = ""
    files: dict[str, str] = Field(default_factory=dict, description="generated instances: the base tree")
    bug_kind: str = Field(default="", description="generated instances: the injected bug's kind")

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"expected a list of test ids or its JSON text, got {value[:60]!r}") from exc
        return value

    def swebench_row(self) -> dict[str, Any]:
        """The instance as a SWE-bench row (test lists JSON-encoded, as in the published files)."""
        row = self.model_dump(exclude={"files", "bug_kind"})
        row["FAIL_TO_PASS"] = json.dumps(self.FAIL_TO_PASS)
        row["PASS_TO_PASS"] = json.dumps(self.PASS_TO_PASS)
        return row
