"""Harness-R1 on BFCL: the kit's DBBench-shaped ctx (:mod:`reharness.kits.bfcl.r1`), read from what the agent
was shown and the environment's observable state, and an r1 patch file naming ``bfcl`` that runs with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from r1_files import solve_with_one_block

from reharness.envs import make_env
from reharness.kits.bfcl import data
from reharness.kits.bfcl.env import BfclEnv
from reharness.kits.bfcl.r1 import BfclAdapter
from reharness.runtime.r1.adapter import Proposal


@pytest.fixture(scope="module")
def env(need_bfcl: None) -> Iterator[BfclEnv]:
    built = make_env("bfcl", split="train")
    yield built
    built.close()


def _act(env: BfclEnv, adapter: BfclAdapter, action: str) -> dict:
    """Ask the pre-action ctx of ``action``, play it, tell the adapter; the pre-action ctx."""
    before = adapter.ctx("on_before_action", env.steps, Proposal(action, action, action))
    adapter.acted(action)
    obs, _, _, _, info = env.step(action)
    adapter.executed(action, obs, info)
    return before


def test_the_ctx_reads_calls_their_problems_and_the_backends_answers(env: BfclEnv) -> None:
    obs, info = env.reset(options={"task": 0})  # the file system: cd(folder='document') first
    adapter = BfclAdapter(env, env.max_steps)
    adapter.reset(obs, info)
    assert set(adapter.ctx("on_init", 0)) == {"action", "state", "task", "bfcl", "predicates"}
    assert adapter.fires("on_before_action", "cd(folder='document')")
    assert adapter.fires("on_before_action", data.END_TURN) and not adapter.fires(
        "on_post_step", data.END_TURN
    )
    assert not adapter.fires("on_before_action", "I will change directory first.")  # prose: no tool call

    first = _act(env, adapter, "cd(folder='document')")
    assert first["action"]["tool"] == "cd" and first["predicates"]["function_call"]
    assert "cd" in first["bfcl"]["available_functions"] and first["bfcl"]["required_arguments"]["cd"] == [
        "folder"
    ]
    unknown = _act(env, adapter, "teleport(folder='x')")
    assert unknown["predicates"]["unknown_function"] and unknown["action"]["unknown_functions"] == [
        "teleport"
    ]
    missing = _act(env, adapter, "cd()")
    assert missing["predicates"]["argument_problem"] and "folder" in missing["action"]["argument_problems"][0]
    assert missing["predicates"]["last_result_error"]  # teleport was refused
    after = adapter.ctx("on_post_step", env.steps - 1, Proposal("cd()", "cd()", "cd()"))
    assert after["bfcl"]["call_history"] == ["cd(folder='document')", "cd()"]  # the refused call never ran
    assert after["state"]["current_directory"] == "document" and after["state"]["error_streak"] == 2
    assert "missing 1 required positional argument" in after["bfcl"]["backend_response"]
    assert _act(env, adapter, "cd()")["predicates"]["repeated_call"]
    assert _act(env, adapter, data.END_TURN)["predicates"]["end_turn"]
    assert adapter.ctx("on_before_action", env.steps, Proposal("ls()", "ls()", "ls()"))["state"]["turn"] == 1


HOOK = """def hook(ctx, nb):
    if ctx.predicates.function_call and not nb.get('blocked'):
        nb['blocked'] = 1
        shown = str(len(ctx.bfcl.available_functions))
        return {'kind': 'block_and_prompt', 'message': 'BLOCKED ' + ctx.action.tool + ' of ' + shown}
    return None
"""


def test_an_r1_patch_file_naming_bfcl_runs_with_its_ctx(env: BfclEnv, tmp_path: Path) -> None:
    record, blocked = solve_with_one_block(env, "bfcl", HOOK, 0, tmp_path)
    functions = len(env.runtime_state()["available_functions"])
    assert blocked.observation == f"BLOCKED cd of {functions}"
    assert record.success  # the solver replays the call after the block
