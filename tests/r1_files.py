"""Test helper: write a Harness-R1 patch file (``harness-r1-patch-v1``) with one code hook, as users do."""

from __future__ import annotations

import json
from pathlib import Path

from reharness.patches.model import HARNESS_R1_SCHEMA


def write_r1_patch(path: Path, benchmark: str, description: str, hook: str, code: str) -> Path:
    """``path`` holding one ``add_code_hook`` action for ``benchmark`` (a kit's name or an official one)."""
    doc = {
        "schema_version": HARNESS_R1_SCHEMA,
        "benchmark": benchmark,
        "description": description,
        "actions": [{"type": "add_code_hook", "hook": hook, "code": code}],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
