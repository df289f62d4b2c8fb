"""Repair operators for ScienceWorld, each tagged with the repair direction it works along.

- :class:`MenuNumberAnswer` (``action_validity``): when the game is waiting for the number of a
  disambiguation menu (``ctx['awaiting_choice']``) and the agent sends a command, rewrite it to option ``0``
  or block it with a reminder to answer with a number;
- :class:`FocusGuard` (``goal_tracking``): ``focus on X`` ends the task at −100 when X is the wrong object;
  block a focus whose object shares no word with the task description, once or twice per episode.

Hooks read only ctx fields (``action``, ``awaiting_choice``, ``task``), never answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

MENU = """
def menu_number_answer(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "").strip()
    if not ctx.get("awaiting_choice") or not text or text.isdigit():
        return None
    nb["menu_fixes"] = nb.get("menu_fixes", 0) + 1
    if <<mode>> == "rewrite":
        return {"type": "rewrite_action", "action": "0"}
    return {"type": "block_and_prompt", "message": "The game asked which object you meant. Answer with the "
            "number of an option (0, 1, ...), not with a command."}
"""

FOCUS = """
def focus_guard(ctx, nb):
    action = ctx.get("action") or {}
    text = " ".join(str(action.get("text") or "").lower().split())
    if not text.startswith("focus on "):
        return None
    task = str((ctx.get("task") or {}).get("instruction") or "").lower()
    stop = {"the", "a", "an", "of", "on", "in", "to", "substance", "called"}
    words = [w for w in re.findall(r"[a-z]+", text[len("focus on "):]) if w not in stop]
    if not words or any(w in task for w in words):
        return None
    blocks = nb.get("focus_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["focus_blocks"] = blocks + 1
    message = "Careful: 'focus on' ends the task as a failure when it is the wrong object, and this object "
    message += "is not named in your task. Re-read the task and focus only on the object it names."
    return {"type": "block_and_prompt", "message": message}
"""


class MenuNumberAnswer(Operator):
    name = "menu_number_answer"
    summary = "Answer ScienceWorld's numbered disambiguation menu with a number (rewrite to 0, or block)"
    codes = ("invalid_action",)
    envs = ("scienceworld",)
    signals = ("invalid_actions",)
    direction = "action_validity"
    priority = 15

    def space(self, env: str) -> ParamSpace:
        return {"mode": ("rewrite", "block")}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        return {"before_action": Fragment("menu_number_answer", fill(MENU, mode=params["mode"]))}


class FocusGuard(Operator):
    name = "focus_guard"
    summary = "Block 'focus on X' when X is not named in the task (a wrong focus ends ScienceWorld at -100)"
    codes = ("wrong_answer",)
    envs = ("scienceworld",)
    direction = "goal_tracking"
    priority = 10

    def space(self, env: str) -> ParamSpace:
        return {"max_blocks": (1, 2)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(FOCUS, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("focus_guard", code, ("re",))}


OPERATORS: tuple[Operator, ...] = (MenuNumberAnswer(), FocusGuard())
