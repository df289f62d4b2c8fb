"""A Harness-R1 patch file reaches the TextWorldExpress games: it names the kit as its benchmark
(``"benchmark": "twx-twc"``; Harness-R1 itself has no TWX benchmark), compiles with the official rules, runs
with the kit's ALFWorld-shaped ctx (:mod:`reharness.kits.twx.r1`) and exports back under the same name."""

from __future__ import annotations

from pathlib import Path

import pytest
from r1_files import solve_with_one_block

from reharness.envs import make_env

pytestmark = pytest.mark.usefixtures("need_twx")

HOOK = """def hook(ctx, nb):
    if ctx.action.normalized.startswith('move') and not nb.get('blocked'):
        nb['blocked'] = 1
        where = ctx.world.current_location
        return {'kind': 'block_and_prompt', 'message': 'BLOCKED in ' + str(where) + ' after ' + str(ctx.step)}
    return None
"""


def test_an_r1_patch_file_naming_the_kit_runs_with_the_text_game_ctx(tmp_path: Path) -> None:
    env = make_env("twx-twc", split="train")
    try:
        task = next(i for i in range(10) if any(a.startswith("move") for a in _gold(env, i)))
        record, blocked = solve_with_one_block(env, "twx-twc", HOOK, task, tmp_path)
    finally:
        env.close()
    room = blocked.observation.removeprefix("BLOCKED in ").split(" after ")[0]
    seen = (record.initial_observation + "".join(s.observation or "" for s in record.steps)).lower()
    assert room not in ("None", "") and f"you are in the {room}." in seen  # ctx.world read the room text
    assert record.success  # the solver moves on the next turn


def _gold(env: object, index: int) -> list[str]:
    env.reset(options={"task": index})  # type: ignore[attr-defined]
    return list(env.gold_path())  # type: ignore[attr-defined]
