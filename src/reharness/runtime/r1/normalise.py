"""Harness-R1's return-value normalisation (``_normalize_hook_result``) and its mapping onto our effects.

:func:`normalise` reproduces the official rules (spec §1.5): ``None``/non-dict → nothing; exact ``kind``
names per hook, no aliases; ``block_and_prompt``/``inject_hint`` need a message; actions must be strings,
are whitespace-collapsed and lower-cased, and a numbered-instance action must be one of ``ctx["admissible"]``
(on every benchmark: without ``admissible`` it is dropped); a dropped action degrades an ``on_post_step``
effect to ``inject_hint`` when it has a message; texts are cleaned (whitespace collapsed, 900 characters);
``on_init`` keeps the first 5 ``skills`` (dicts' ``text`` or strings) and a ``tool_hint``.

:func:`to_effects` turns the normalised dict into the runtime's :class:`~reharness.runtime.effects.Effect`
objects, so both dialects run through one effect engine. Nothing here raises for what a hook returned.
"""

from __future__ import annotations

import re
from typing import Any

from reharness.runtime.effects import Effect

MAX_TEXT = 900
MAX_SKILLS = 5
BEFORE_KINDS = ("block_and_prompt", "force_action", "rewrite_action")
AFTER_KINDS = ("inject_hint", "force_action")
#: Official ALFWorld instance verbs: one of them followed later by a standalone number is an instance action.
_VERBS = r"go to|take|pick up|put|open|close|toggle|clean|heat|cool|slice|examine|use"
_NUMBERED = re.compile(rf"\b(?:{_VERBS})\b.*?(?<![\w.])\d+(?![\w.])")
_KIND = {
    "block_and_prompt": "block",
    "rewrite_action": "rewrite",
    "force_action": "force",
    "inject_hint": "hint",
}


def clean(value: Any) -> str:
    """Official text cleaning: non-``str`` → ``""``; whitespace runs → one space; stripped; ≤ 900 chars."""
    if not isinstance(value, str):
        return ""
    return " ".join(value.split())[:MAX_TEXT]


def is_numbered_instance(text: str) -> bool:
    """Harness-R1's "numbered ALFWorld instance action" test (whitespace collapsed, lower-cased)."""
    return _NUMBERED.search(" ".join(text.split()).lower()) is not None


def _action(value: Any, admissible: Any) -> str:
    if not isinstance(value, str):
        return ""
    action = " ".join(value.split()).lower()
    if is_numbered_instance(action):
        allowed = {" ".join(str(a).split()).lower() for a in admissible or []}
        if action not in allowed:
            return ""
    return action[:MAX_TEXT]


def normalise(hook: str, value: Any, admissible: Any = None) -> dict[str, Any] | None:
    """The official normalised output of ``hook`` (official name) for return ``value``, or ``None``."""
    if not isinstance(value, dict):
        return None
    if hook == "on_init":
        out: dict[str, Any] = {}
        skills = value.get("skills")
        if isinstance(skills, list):
            texts = [clean(s.get("text") if isinstance(s, dict) else s) for s in skills[:MAX_SKILLS]]
            kept = [{"id": "code_hook_skill", "text": t, "trigger": "code_hook"} for t in texts if t]
            if kept:
                out["skills"] = kept
        hint = clean(value.get("tool_hint"))
        if hint:
            out["tool_hint"] = hint
        return out or None
    if hook == "make_pre_hint":
        message = clean(value.get("message"))
        return {"message": message} if message else None
    kinds = BEFORE_KINDS if hook == "on_before_action" else AFTER_KINDS if hook == "on_post_step" else ()
    kind = str(value.get("kind", "")).strip()
    if kind not in kinds:
        return None
    message = clean(value.get("message"))
    if kind in ("block_and_prompt", "inject_hint"):
        return {"kind": kind, "message": message} if message else None
    action = _action(value.get("action"), admissible)
    if not action:
        if hook == "on_post_step" and message:
            return {"kind": "inject_hint", "message": message}
        return None
    return {"kind": kind, "action": action} | ({"message": message} if message else {})


def to_effects(point: str, normalised: dict[str, Any] | None, overlay: str) -> list[Effect]:
    """The runtime effects of one normalised output (``point``: reharness's hook point name)."""
    if not normalised:
        return []
    if point == "on_init":
        effects = []
        skills = tuple(s["text"] for s in normalised.get("skills", []))
        if skills:
            effects.append(Effect("context", skills=skills, overlay=overlay, point=point))
        if normalised.get("tool_hint"):
            effects.append(Effect("tool_hint", text=normalised["tool_hint"], overlay=overlay, point=point))
        return effects
    if point == "before_decision":
        return [Effect("message", text=normalised["message"], overlay=overlay, point=point)]
    kind = _KIND[normalised["kind"]]
    return [
        Effect(
            kind,
            text=normalised.get("message"),
            action=normalised.get("action"),
            overlay=overlay,
            point=point,
        )
    ]
