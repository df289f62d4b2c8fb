"""Harness-R1 on ScienceWorld: the kit's ALFWorld-shaped ctx (:mod:`reharness.kits.scienceworld.r1`) read
from the game's own text, and an r1 patch file naming the kit (``"benchmark": "scienceworld"``) that runs
with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from r1_files import solve_with_one_block

from reharness.envs import make_env
from reharness.kits.scienceworld.env import ScienceWorldEnv
from reharness.kits.scienceworld.r1 import ScienceWorldAdapter
from reharness.runtime.r1.adapter import Proposal


@pytest.fixture(scope="module")
def env(need_scienceworld: None) -> Iterator[ScienceWorldEnv]:
    built = make_env("scienceworld", split="train", max_steps=60)
    yield built
    built.close()


def test_the_ctx_reads_room_doors_inventory_and_refused_commands(env: ScienceWorldEnv) -> None:
    obs, info = env.reset(options={"task": 0})  # boil: starts in the hallway, six closed doors
    adapter = ScienceWorldAdapter(env, env.max_steps)
    adapter.reset(obs, info)
    for action in ["inventory", "fly away", "fly away", "open door to kitchen", "go to kitchen"]:
        obs, _, _, _, info = env.step(action)
        adapter.executed(action, obs, info)
    ctx = adapter.ctx("on_before_action", 5, Proposal("look around", "look around", "look around"))
    assert set(ctx) >= {"action", "state", "task", "predicates", "observation", "admissible", "world"}
    assert ctx["task"]["task_type"] == env.task_fields()["task_type"] == "boil"
    assert ctx["state"]["nothing_happens_count"] == 2  # "No known action matches …" (last 4)
    world = ctx["world"]
    assert world["current_location"] == "kitchen" and "hallway" in world["visited"]
    assert "art studio" in world["unvisited"] and "kitchen" not in world["unvisited"]  # doors, not entered
    assert world["inventory"].startswith("In your inventory") and world["awaiting_choice"] is False
    assert ctx["action"]["in_admissible"]  # "look around" is always valid


HOOK = """def hook(ctx, nb):
    if ctx.action.normalized.startswith('go to') and not nb.get('blocked'):
        nb['blocked'] = 1
        return {'kind': 'block_and_prompt', 'message': 'BLOCKED in ' + str(ctx.world.current_location)}
    return None
"""


def test_an_r1_patch_file_naming_the_kit_runs_with_its_ctx(env: ScienceWorldEnv, tmp_path: Path) -> None:
    _, blocked = solve_with_one_block(env, "scienceworld", HOOK, 0, tmp_path)
    assert blocked.observation == "BLOCKED in hallway"  # ctx.world read "This room is called the hallway."
