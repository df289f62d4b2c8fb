"""The real kits' repair operators change real episodes the way they claim (patches run in the sandbox).

Patches name their environment, and the patch model accepts kit environments only once the kit registry
feeds it (issue 34); until then these tests skip with that reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reharness.envs.registry import make_env
from reharness.kits.bfcl.operators import CallFormatGuard, CdReminder, RequiredArgumentGuard
from reharness.kits.scienceworld.operators import FocusGuard, MenuNumberAnswer
from reharness.patches import Patch
from reharness.patches.errors import PatchFormatError
from reharness.patches.overlay import PatchOverlay
from reharness.runtime import EpisodeRunner, FunctionAgent, Harness
from reharness.store.records import EpisodeRecord


def build(operator: Any, params: dict[str, Any], env: str) -> Patch:
    try:
        return operator.build(params, env)
    except PatchFormatError as exc:
        if exc.code != "unknown_env":
            raise
        print(f"SKIPPED: {exc}")
        pytest.skip("the patch model does not accept kit environments yet (issue 34)")


def scripted(replies: list[str]) -> FunctionAgent:
    """An agent that sends ``replies`` in order, then repeats the last one."""
    count = {"n": 0}

    def reply(request: Any) -> str:
        text = replies[min(count["n"], len(replies) - 1)]
        count["n"] += 1
        return f"Action: {text}"

    return FunctionAgent(reply, policy_id="scripted")


def episode(
    env_name: str, replies: list[str], patch: Patch | None, step_limit: int, task: int = 0
) -> EpisodeRecord:
    env = make_env(env_name, split="test")
    harness = Harness(Harness.base(env_name).config.model_copy(update={"step_limit": step_limit}))
    overlay = PatchOverlay(patch) if patch is not None else None
    if overlay is not None:
        harness = harness.with_overlays(overlay)

    async def run() -> EpisodeRecord:
        try:
            return await EpisodeRunner(env, scripted(replies), harness).run(env.get_task(task), 0)
        finally:
            if overlay is not None:
                await overlay.close()

    try:
        return asyncio.run(run())
    finally:
        env.close()


MENU_SCRIPT = ["open door to kitchen", "go to kitchen", "look at substance", "look at door", "look around"]


def test_menu_answer_rewrites_a_command_sent_to_a_menu(need_scienceworld: None) -> None:
    patch = build(MenuNumberAnswer(), {"mode": "rewrite"}, "scienceworld")
    plain = episode("scienceworld", MENU_SCRIPT, None, 5)
    patched = episode("scienceworld", MENU_SCRIPT, patch, 5)
    assert plain.steps[3].action == "look at door" and "Unknown action" in plain.steps[3].observation
    assert patched.steps[3].action == "0" and "air" in patched.steps[3].observation.lower()


def test_focus_guard_blocks_a_focus_on_an_object_the_task_never_names(need_scienceworld: None) -> None:
    script = ["open door to kitchen", "go to kitchen", "focus on sink", "look around"]
    plain = episode("scienceworld", script, None, 4)
    patched = episode("scienceworld", script, build(FocusGuard(), {}, "scienceworld"), 4)
    assert plain.termination == "terminated" and not plain.success  # the wrong focus ended it at -100
    assert patched.termination != "terminated" and any("blocked" in s.flags for s in patched.steps)


def test_bfcl_guards_block_malformed_and_incomplete_calls(need_bfcl: None) -> None:
    script = ["cd to the documents folder", "cd()", "end_turn"]
    patch = build(CallFormatGuard(), {}, "bfcl")
    patched = episode("bfcl", script, patch, 3)
    assert "blocked" in patched.steps[0].flags
    patched = episode("bfcl", ["cd()", "end_turn"], build(RequiredArgumentGuard(), {}, "bfcl"), 2)
    assert "blocked" in patched.steps[0].flags


def test_bfcl_cd_reminder_hints_after_a_missing_file(need_bfcl: None) -> None:
    patched = episode(
        "bfcl", ["cat(file_name='no_such.txt')", "end_turn"], build(CdReminder(), {}, "bfcl"), 2
    )
    hints = [e for e in patched.steps[0].effects if e.get("kind") == "hint"]
    assert hints and "cd(folder=" in hints[0]["text"]
