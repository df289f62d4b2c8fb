"""Hook points, effects and their schema.

Four lifecycle hook points with Harness-R1-compatible semantics (REFERENCE.md §1). A hook returns a plain
value; :func:`parse_effect` validates it against the per-hook effect schema and turns it into an
:class:`Effect`. The runtime applies only validated effects; anything else becomes a recorded hook error with
no effect. Harness-R1's hook names and return shapes are accepted as aliases.

| point             | Harness-R1 name     | allowed effects                                   |
|-------------------|---------------------|---------------------------------------------------|
| ``on_init``       | ``on_init``         | ``context`` (skills ≤ 5, optional tool hint)      |
| ``before_decision`` | ``make_pre_hint`` | ``message``                                       |
| ``before_action`` | ``on_before_action``| ``block`` (message), ``rewrite`` / ``force`` (action) |
| ``after_feedback``| ``on_post_step``    | ``hint`` (message), ``force`` (action)            |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reharness.core.errors import ReharnessError

HOOK_POINTS: tuple[str, ...] = ("on_init", "before_decision", "before_action", "after_feedback")
HARNESS_R1_ALIASES: dict[str, str] = {
    "on_init": "on_init",
    "make_pre_hint": "before_decision",
    "on_before_action": "before_action",
    "on_post_step": "after_feedback",
}
EffectKind = Literal["context", "message", "block", "rewrite", "force", "hint"]
ALLOWED_EFFECTS: dict[str, frozenset[str]] = {
    "on_init": frozenset({"context"}),
    "before_decision": frozenset({"message"}),
    "before_action": frozenset({"block", "rewrite", "force"}),
    "after_feedback": frozenset({"hint", "force"}),
}
#: Effects that only add text to the context; every environment honours them.
TEXT_EFFECTS = frozenset({"context", "message", "tool_hint"})
MAX_TEXT_CHARS = 900
MAX_SKILLS = 5
_TYPE_ALIASES = {
    "block_and_prompt": "block",
    "block": "block",
    "rewrite_action": "rewrite",
    "rewrite": "rewrite",
    "force_action": "force",
    "force": "force",
    "inject_hint": "hint",
    "hint": "hint",
    "message": "message",
}


class EffectError(ReharnessError):
    """A hook returned a value that is not a valid effect for its hook point."""

    code = "invalid_effect"


def canonical_hook_point(name: str) -> str:
    """Map reharness or Harness-R1 hook names to reharness's hook point names."""
    if name in HOOK_POINTS:
        return name
    if name in HARNESS_R1_ALIASES:
        return HARNESS_R1_ALIASES[name]
    known = list(HOOK_POINTS) + [k for k in HARNESS_R1_ALIASES if k not in HOOK_POINTS]
    raise EffectError(f"unknown hook {name!r}", hint=f"use one of: {', '.join(known)}", code="unknown_hook")


@dataclass(frozen=True)
class Effect:
    """A validated effect returned by one hook of one overlay."""

    kind: str
    text: str | None = None
    action: str | None = None
    skills: tuple[str, ...] = ()
    overlay: str = ""
    point: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "point": self.point, "overlay": self.overlay}
        if self.text is not None:
            out["text"] = self.text
        if self.action is not None:
            out["action"] = self.action
        if self.skills:
            out["skills"] = list(self.skills)
        return out


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EffectError(f"{what} must be a non-empty string, got {type(value).__name__}")
    if len(value) > MAX_TEXT_CHARS:
        raise EffectError(
            f"{what} is {len(value)} characters; the limit is {MAX_TEXT_CHARS}",
            hint="return a shorter message",
        )
    return value


def parse_effect(point: str, value: Any, overlay: str = "") -> Effect | None:
    """Validate a hook's return value for ``point``; ``None`` means "no effect"."""
    point = canonical_hook_point(point)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise EffectError(f"{point} returned {type(value).__name__}; hooks return a dict or None")
    if point == "on_init":
        skills_raw = value.get("skills", [])
        if not isinstance(skills_raw, list) or len(skills_raw) > MAX_SKILLS:
            raise EffectError(f"on_init 'skills' must be a list of at most {MAX_SKILLS} items")
        skills = []
        for item in skills_raw:
            skill_text = item.get("text") if isinstance(item, dict) else item
            skills.append(_text(skill_text, "a skill's text"))
        tool_hint = value.get("tool_hint")
        if tool_hint is not None:
            skills.append(_text(tool_hint, "tool_hint"))
        if not skills:
            return None
        return Effect("context", skills=tuple(skills), overlay=overlay, point=point)
    if point == "before_decision":
        unknown = set(value) - {"message", "type"}
        if unknown:
            raise EffectError(
                f"before_decision returned unknown keys {sorted(unknown)}; expected {{'message': ...}}"
            )
        return Effect("message", text=_text(value.get("message"), "message"), overlay=overlay, point=point)
    kind = _TYPE_ALIASES.get(str(value.get("type", "")))
    if kind is None or kind not in ALLOWED_EFFECTS[point]:
        allowed = sorted(k for k, v in _TYPE_ALIASES.items() if v in ALLOWED_EFFECTS[point])
        raise EffectError(
            f"{point} returned type {value.get('type')!r}",
            hint=f"{point} may return {{'type': one of {allowed}, ...}} or None",
        )
    if kind in ("block", "hint"):
        return Effect(kind, text=_text(value.get("message"), "message"), overlay=overlay, point=point)
    return Effect(kind, action=_text(value.get("action"), "action"), overlay=overlay, point=point)


@dataclass
class HookOutcome:
    """Result of calling one hook: the raw value, the notebook after the call, and an error if it failed."""

    value: Any = None
    error: str | None = None
    error_type: str | None = None
    duration_s: float = 0.0
    nb: dict[str, Any] = field(default_factory=dict)
