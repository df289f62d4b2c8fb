"""Repair operators for BFCL multi-turn, each tagged with the repair direction it works along.

- :class:`CallFormatGuard` (``tool_protocol``): block an action that is neither ``end_turn`` nor a call
  ``name(...)`` (or a list of them), with the expected format in the message;
- :class:`RequiredArgumentGuard` (``error_feedback``): block a call that omits a required argument of the
  function (``ctx['required_arguments']``, from the function's JSON schema), naming the missing ones;
- :class:`CdReminder` (``state_memory``): after a file call fails with ``No such file or directory``, remind
  the agent of its current directory and that it must ``cd`` into the folder first.

Hooks read only ctx fields (``action``, ``observation``, ``required_arguments``, ``current_directory``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

FORMAT = """
def call_format_guard(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "").strip()
    pattern = r"^\\[?\\s*[A-Za-z_][A-Za-z0-9_]*\\s*\\(.*\\)\\s*\\]?$"
    if text in ("end_turn", "end_turn()") or re.match(pattern, text, re.S):
        return None
    blocks = nb.get("format_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["format_blocks"] = blocks + 1
    message = "Not a function call. Reply with [name(argument=value), ...] using the available functions, "
    return {"type": "block_and_prompt", "message": message + "or end_turn when the request is done."}
"""

REQUIRED = """
def required_argument_guard(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "")
    needed = ctx.get("required_arguments") or {}
    for name, inner in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\\s*\\(([^()]*)\\)", text):
        required = needed.get(name) or []
        if not required or (inner.strip() and "=" not in inner):
            continue
        given = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\\s*=", inner))
        missing = [r for r in required if r not in given]
        if missing:
            nb["argument_blocks"] = nb.get("argument_blocks", 0) + 1
            if nb["argument_blocks"] > <<max_blocks>>:
                return None
            message = name + " needs the argument(s) " + ", ".join(missing) + "."
            return {"type": "block_and_prompt", "message": message + " Call it again with every one of them."}
    return None
"""

CD = """
def cd_reminder(ctx, nb):
    text = str(ctx.get("observation") or "")
    if "No such file or directory" not in text:
        return None
    where = ctx.get("current_directory") or "the directory you started in"
    return {"type": "inject_hint", "message": "That file is not in the current directory (" + str(where)
            + "). Use ls() to look, and cd(folder='...') into the folder that holds it before using it."}
"""


class CallFormatGuard(Operator):
    name = "bfcl_call_format_guard"
    summary = "Block replies that are not name(arg=value) calls or end_turn, with the expected format"
    codes = ("format_error", "invalid_action")
    envs = ("bfcl",)
    direction = "tool_protocol"
    priority = 12

    def space(self, env: str) -> ParamSpace:
        return {"max_blocks": (3, 1)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(FORMAT, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("call_format_guard", code, ("re",))}


class RequiredArgumentGuard(Operator):
    name = "bfcl_required_argument_guard"
    summary = "Block a BFCL call that omits a required argument of its function, naming the missing ones"
    codes = ("tool_error",)
    envs = ("bfcl",)
    direction = "error_feedback"
    priority = 14

    def space(self, env: str) -> ParamSpace:
        return {"max_blocks": (3, 1)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(REQUIRED, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("required_argument_guard", code, ("re",))}


class CdReminder(Operator):
    name = "bfcl_cd_reminder"
    summary = "After 'No such file or directory', remind the agent where it is and to cd first"
    codes = ("tool_error",)
    envs = ("bfcl",)
    direction = "state_memory"
    priority = 60

    def space(self, env: str) -> ParamSpace:
        return {}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        return {"after_feedback": Fragment("cd_reminder", CD)}


OPERATORS: tuple[Operator, ...] = (CallFormatGuard(), RequiredArgumentGuard(), CdReminder())
