"""The ``lights`` kit: the Lights environment plus what reharness should know about it.

- the environment, through reharness's gymnasium adapter, with the ``mismatched`` count shown to hooks;
- the base harness (``harness.yaml``);
- a failure detector: ``premature_answer`` when the agent said ``done`` with lamps still wrong;
- a repair operator along the ``goal_tracking`` direction: block ``done`` while lamps are still wrong;
- a tiny-agent recipe, so ``reharness agent train --env lights`` trains a small model on the solver.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import reharness_lights.env  # noqa: F401 - registers reharness_lights/Lights-v0 with gymnasium
from reharness.engineer.operators import Fragment, Operator, ParamSpace, fill
from reharness.envs import EnvKit
from reharness.envs.gym_adapter import gym_env
from reharness.models.tiny.spec import TinySpec


@dataclass(frozen=True)
class Finding:
    code: str
    steps: tuple[int, ...]
    detail: str


def done_too_early(record: Any) -> Iterator[Finding]:
    """``done`` while the lamps did not match: the episode ended on the agent's word, unsolved."""
    last = record.steps[-1] if record.steps else None
    if last is not None and (last.action or "").strip().lower() == "done" and not record.success:
        yield Finding("premature_answer", (last.index,), "said done before the lamps matched")


PATTERN_CHECK = """
def pattern_check(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "").strip().lower()
    wrong = ctx.get("mismatched") or 0
    if text != "done" or wrong == 0 or nb.get("pattern_blocks", 0) >= <<max_blocks>>:
        return None
    nb["pattern_blocks"] = nb.get("pattern_blocks", 0) + 1
    message = str(wrong) + " lamp(s) still differ from the target. Toggle them before you say done."
    return {"type": "block_and_prompt", "message": message}
"""


class PatternCheck(Operator):
    """Block ``done`` while lamps still differ from the target."""

    name = "pattern_check"
    summary = "Block 'done' while some lamps still differ from the target pattern"
    codes = ("premature_answer", "wrong_answer")
    envs = ("lights",)
    direction = "goal_tracking"
    priority = 10

    def space(self, env: str) -> ParamSpace:
        return {"max_blocks": (2, 1, 4)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(PATTERN_CHECK, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("pattern_check", code)}


KIT = EnvKit(
    name="lights",
    env=gym_env("reharness_lights/Lights-v0", name="lights", state_keys=("mismatched",)),
    summary="Lights (example kit): toggle lamps to match a target pattern, then say done",
    harnesses={"base": "reharness_lights:harness.yaml"},
    detectors=(done_too_early,),
    operators=(PatternCheck(),),
    ctx_fields={"mismatched": "int"},
    # a tiny agent trained on the solver (``reharness agent train --env lights``): replies are one command
    tiny=TinySpec(recipes={"S": {"max_new_tokens": 16, "steps": 300}}),
)
