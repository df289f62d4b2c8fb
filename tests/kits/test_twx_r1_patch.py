"""A Harness-R1 patch file reaches the TextWorldExpress games: it names the kit as its benchmark
(``"benchmark": "twx-twc"``; Harness-R1 itself has no TWX benchmark), compiles with the official rules, runs
with the kit's ALFWorld-shaped ctx (:mod:`reharness.kits.twx.r1`) and exports back under the same name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from r1_files import write_r1_patch

from reharness.envs import make_env
from reharness.patches.model import load_patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.validate import validate_patch
from reharness.runtime import EpisodeRunner, Harness
from reharness.runtime.agents import SolverAgent

pytestmark = pytest.mark.usefixtures("need_twx")

HOOK = """def hook(ctx, nb):
    if ctx.action.normalized.startswith('move') and not nb.get('blocked'):
        nb['blocked'] = 1
        where = ctx.world.current_location
        return {'kind': 'block_and_prompt', 'message': 'BLOCKED in ' + str(where) + ' after ' + str(ctx.step)}
    return None
"""


def test_an_r1_patch_file_naming_the_kit_runs_with_the_text_game_ctx(tmp_path: Path) -> None:
    path = write_r1_patch(
        tmp_path / "patch.json", "twx-twc", "Pause before the first move.", "on_before_action", HOOK
    )
    patch = load_patch(path)
    assert patch.env == "twx-twc" and patch.dialect == "r1"
    assert validate_patch(patch) == []
    env = make_env("twx-twc", split="train")
    try:
        harness = Harness.base("twx-twc").with_overlays(PatchOverlay(patch))
        task = next(i for i in range(10) if any(a.startswith("move") for a in _gold(env, i)))
        record = asyncio.run(EpisodeRunner(env, SolverAgent(), harness).run(env.get_task(task), seed=0))
    finally:
        env.close()
    blocked = [s for s in record.steps if "blocked" in s.flags]
    assert len(blocked) == 1 and not any(s.hook_errors for s in record.steps)
    room = blocked[0].observation.removeprefix("BLOCKED in ").split(" after ")[0]
    seen = (record.initial_observation + "".join(s.observation or "" for s in record.steps)).lower()
    assert room not in ("None", "") and f"you are in the {room}." in seen  # ctx.world read the room text
    assert record.success  # the solver moves on the next turn
    assert load_patch(path).to_harness_r1()["benchmark"] == "twx-twc"  # exported under the kit's name


def _gold(env: object, index: int) -> list[str]:
    env.reset(options={"task": index})  # type: ignore[attr-defined]
    return list(env.gold_path())  # type: ignore[attr-defined]
