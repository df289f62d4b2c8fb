"""Operators for every environment: snap to admissible, loop breaker, goal reminder, invalid/format hints.

Each reads only generic ``ctx`` fields (``action``, ``admissible``, ``history``, ``counters``, ``task``,
``step``) and keeps its own bookkeeping in ``nb`` under its own keys. Effects respect what the environment
honours (``TextEnv.honoured_effects``): where only block and hint are honoured the loop breaker cannot force;
each kit tunes them (``EnvKit.operator_settings``) and says which apply (``EnvKit.generic_operators``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

_NORMALISE = '" ".join(str(action.get("text") or "").lower().split())'

SNAP = """
def snap_to_admissible(ctx, nb):
    action = ctx.get("action") or {}
    text = <<NORM>>
    options = [str(a) for a in (ctx.get("admissible") or [])]
    if not text or not options or text in [o.lower() for o in options]:
        return None
<<SKIP>>    scored = sorted([(difflib.SequenceMatcher(None, text, o.lower()).ratio(), o) for o in options])
    score, best = scored[-1]
    if score >= <<cutoff>>:
        nb["snapped"] = nb.get("snapped", 0) + 1
        return {"type": "rewrite_action", "action": best}
<<FALLBACK>>    return None
"""
SNAP_BLOCK = """    shown = [o for s, o in reversed(scored)][:<<shown>>]
    message = "That action is not valid here. The closest valid actions are: " + "; ".join(shown) + "."
    return {"type": "block_and_prompt", "message": message[:900]}
"""


class SnapToAdmissible(Operator):
    name = "snap_to_admissible"
    summary = "Rewrite an action that is not admissible to the most similar admissible one (difflib)"
    codes = ("invalid_action", "format_error")
    signals = ("invalid_actions", "nothing_happens")
    generic = True
    priority = 20
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"cutoff": (0.5, 0.95)}

    def space(self, env: str) -> ParamSpace:
        # a kit's ``cutoffs`` put its own default first (a strict one where actions differ by one word)
        cutoffs = tuple(self.settings(env).get("cutoffs", (0.75, 0.6, 0.85)))
        return {"cutoff": cutoffs, "fallback": ("none", "block")}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        # actions that start with a kit's ``skip_prefix`` are free text and never snapped (free-text searches)
        prefix = self.settings(env).get("skip_prefix")
        skip = f"    if text.startswith({json.dumps(prefix)}):\n        return None\n" if prefix else ""
        fallback = fill(SNAP_BLOCK, shown=5) if params["fallback"] == "block" else ""
        parts = {"NORM": _NORMALISE, "SKIP": skip, "FALLBACK": fallback}
        code = fill(SNAP, parts, cutoff=params["cutoff"])
        return {"before_action": Fragment("snap_to_admissible", code, ("difflib",))}


LOOP_PROPOSED = """
def loop_breaker(ctx, nb):
    action = ctx.get("action") or {}
    text = <<NORM>>
    if not text:
        return None
    recent = [" ".join(str(h.get("action") or "").lower().split()) for h in (ctx.get("history") or [])]
    repeats = sum(1 for seen in recent[-<<window>>:] if seen == text)
    if repeats < <<threshold>>:
        nb["loop_blocks"] = 0
        return None
<<FORCE>>    blocks = nb.get("loop_blocks", 0)
    if blocks >= <<max_blocks>>:
        nb["loop_blocks"] = 0
        return None
    nb["loop_blocks"] = blocks + 1
    message = "You already did this action " + str(repeats) + " times in your last steps without progress. "
    return {"type": "block_and_prompt", "message": message + <<advice>>}
"""
LOOP_FORCE = """    unvisited = [str(u).lower() for u in (ctx.get("unvisited") or [])]
    fresh = [str(o) for o in (ctx.get("admissible") or []) if str(o).lower() not in recent]
    fresh = [o for o in fresh if o.lower() != text]
    preferred = [o for o in fresh if any(o.lower().endswith(" " + u) for u in unvisited)]
    if preferred or fresh:
        nb["loop_forced"] = nb.get("loop_forced", 0) + 1
        return {"type": "force_action", "action": (preferred or fresh)[0]}
"""
LOOP_HINT = """
def loop_breaker(ctx, nb):
    recent = [" ".join(str(h.get("action") or "").lower().split()) for h in (ctx.get("history") or [])]
    if not recent:
        return None
    repeats = sum(1 for seen in recent[-<<window>>:] if seen == recent[-1])
    if repeats < <<repeats>>:
        return None
    message = "You have done the same action " + str(repeats) + " times in your last steps without progress. "
    return {"type": "inject_hint", "message": message + <<advice>>}
"""
GENERIC_LOOP_ADVICE = "Do something different: try an action you have not tried yet."


class LoopBreaker(Operator):
    name = "loop_breaker"
    summary = "Break repetition loops: when one action recurs within a window, block it, force an untried "
    summary += "admissible action, or give a hint"
    codes = ("repeated_action", "no_progress", "step_limit")
    signals = ("repeated_actions", "repeated_observations", "repeated_sql", "repeated_clicks")
    generic = True
    priority = 30
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"repeats": (2, 8), "window": (2, 12)}

    def space(self, env: str) -> ParamSpace:
        # a kit's ``modes`` put its own default first
        modes = tuple(self.settings(env).get("modes", ("block", "force", "hint")))
        return {"repeats": (3, 2, 4), "window": (6, 4, 8), "mode": modes}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        advice = str(self.settings(env).get("advice", GENERIC_LOOP_ADVICE))
        if params["mode"] == "hint":
            code = fill(LOOP_HINT, window=params["window"], repeats=params["repeats"], advice=advice)
            return {"after_feedback": Fragment("loop_breaker", code)}
        force = LOOP_FORCE if params["mode"] == "force" else ""
        parts = {"NORM": _NORMALISE, "FORCE": force}
        threshold = params["repeats"] - 1
        code = fill(
            LOOP_PROPOSED, parts, window=params["window"], threshold=threshold, max_blocks=3, advice=advice
        )
        return {"before_action": Fragment("loop_breaker", code)}


GOAL = """
def goal_reminder(ctx, nb):
    step = int(ctx.get("step") or 0)
    counters = ctx.get("counters") or {}
<<FAILED>>    if step == 0 or (step % <<every>> != 0 and not failed):
        return None
    task = ctx.get("task") or {}
    facts = []
    for key in sorted(task):
        value = task[key]
        if key in ("instruction", "description", "task_type") or value is None or isinstance(value, bool):
            continue
        if isinstance(value, (str, int, float)):
            shown = str(value)
        elif isinstance(value, (list, tuple)):
            shown = ", ".join(str(v) for v in value)
        else:
            shown = ", ".join(str(k) + ": " + str(value[k]) for k in sorted(value))
        if shown:
            facts.append(key.replace("_", " ") + ": " + shown)
    message = "Remember the task: " + str(task.get("instruction") or "").strip()
    if facts:
        message += " (" + "; ".join(facts) + ")"
    progress = []
    for path in <<progress>>:
        value = ctx
        for part in path.split("."):
            value = value.get(part) if value is not None else None
        if isinstance(value, (list, tuple)):
            value = ", ".join(str(v) for v in value) or "none"
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            value = ", ".join(str(k) + ": " + str(value[k]) for k in sorted(value)) or "none"
        if value is not None:
            progress.append(path.split(".")[-1].replace("_", " ") + ": " + str(value))
    if progress:
        message += ". Progress so far: " + "; ".join(progress)
    return {"message": (message + ". Check that your next action brings you closer to it.")[:900]}
"""
GOAL_FAILED = """    streaks = [counters.get("invalid_streak") or 0, counters.get("format_error_streak") or 0]
    failed = max(streaks) > 0
"""


class GoalReminder(Operator):
    name = "goal_reminder"
    summary = "Remind the goal and the task's stated requirements every few steps and after a failed action"
    codes = ("no_progress", "step_limit", "wrong_answer")
    signals = ("step_limit_hit",)
    generic = True
    priority = 70
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"every": (2, 12)}
    weight = 0.5  # generic: it helps a little with anything, so specific repairs should win

    def space(self, env: str) -> ParamSpace:
        return {"every": (5, 3, 8), "on_failure": (True, False), "progress": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        # the ctx paths a kit lists as ``progress`` are shown as "progress so far"
        progress = tuple(self.settings(env).get("progress", ())) if params["progress"] else ()
        failed = GOAL_FAILED if params["on_failure"] else "    failed = False\n"
        code = fill(GOAL, {"FAILED": failed}, every=params["every"], progress=progress)
        return {"before_decision": Fragment("goal_reminder", code)}


INVALID = """
def invalid_action_hint(ctx, nb):
    counters = ctx.get("counters") or {}
    if (counters.get("invalid_streak") or 0) < <<streak>>:
        return None
    options = [str(a) for a in (ctx.get("admissible") or [])]
    if not options:
        return None
    last = str(counters.get("last_action") or "").lower().replace("[", " ").replace("]", " ")
    words = set(w for w in last.split() if len(w) > 2) - {"the", "from", "with", "click", "search"}
    related = [o for o in options if words & set(o.lower().replace("[", " ").replace("]", " ").split())]
    shown = (related or options)[:<<shown>>]
    message = "That action was not valid here. Copy one action exactly from the admissible list, e.g.: "
    return {"type": "inject_hint", "message": (message + "; ".join(shown) + ".")[:900]}
"""


class InvalidActionHint(Operator):
    name = "invalid_action_hint"
    summary = "After an invalid action, list admissible actions that share words with the failed one"
    codes = ("invalid_action",)
    signals = ("invalid_actions", "nothing_happens")
    generic = True
    priority = 60
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"shown": (1, 10), "streak": (1, 4)}

    def space(self, env: str) -> ParamSpace:
        return {"shown": (5, 3, 8), "streak": (1, 2)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(INVALID, shown=params["shown"], streak=params["streak"])
        return {"after_feedback": Fragment("invalid_action_hint", code)}


FORMAT = """
def format_reminder(ctx, nb):
    counters = ctx.get("counters") or {}
    streak = counters.get("format_error_streak") or 0
<<INVALID>>    if streak < 1:
        return None
    return {"message": <<message>>}
"""
FORMAT_SHORT = "Your last reply could not be read as an action. Follow the reply format exactly: one action."


class FormatReminder(Operator):
    name = "format_reminder"
    summary = (
        "After a reply that could not be parsed, restate the exact reply format before the next decision"
    )
    codes = ("format_error", "tool_error")
    signals = ("format_errors", "tool_errors")
    generic = True
    priority = 65

    def space(self, env: str) -> ParamSpace:
        return {"style": ("example", "short")}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        settings = self.settings(env)
        message = str(settings.get("message", FORMAT_SHORT)) if params["style"] == "example" else FORMAT_SHORT
        # a kit whose protocol hands malformed replies to the env (db) counts invalid actions too
        count_invalid = settings.get("count_invalid", False)
        invalid = '    streak = max(streak, counters.get("invalid_streak") or 0)\n' if count_invalid else ""
        code = fill(FORMAT, {"INVALID": invalid}, message=message)
        return {"before_decision": Fragment("format_reminder", code)}
