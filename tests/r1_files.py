"""Test helpers: write a Harness-R1 patch file (``harness-r1-patch-v1``) with one code hook, as users do, and
run one under the scripted solver on a kit that names itself as the patch's benchmark."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from reharness.patches.model import HARNESS_R1_SCHEMA, load_patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.validate import validate_patch
from reharness.runtime import EpisodeRunner, Harness
from reharness.runtime.agents import SolverAgent
from reharness.store.records import EpisodeRecord, StepRecord


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


def solve_with_one_block(
    env: Any, benchmark: str, code: str, task: int, tmp_path: Path
) -> tuple[EpisodeRecord, StepRecord]:
    """Run task ``task`` of ``env`` under the solver with an ``on_before_action`` r1 patch naming
    ``benchmark`` (the kit's name) whose hook ``code`` blocks once; checks that the file loads, validates
    and exports under that name, and that exactly one step was blocked without hook errors.

    Returns the episode and its blocked step."""
    path = write_r1_patch(tmp_path / "patch.json", benchmark, "Block once.", "on_before_action", code)
    patch = load_patch(path)
    assert patch.env == benchmark and patch.dialect == "r1" and validate_patch(patch) == []
    assert patch.to_harness_r1()["benchmark"] == benchmark  # exported under the kit's name
    harness = Harness.base(benchmark).with_overlays(PatchOverlay(patch))
    record = asyncio.run(EpisodeRunner(env, SolverAgent(), harness).run(env.get_task(task), seed=0))
    blocked = [s for s in record.steps if "blocked" in s.flags]
    assert len(blocked) == 1 and not any(s.hook_errors for s in record.steps)
    return record, blocked[0]
