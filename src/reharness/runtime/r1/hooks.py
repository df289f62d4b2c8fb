"""Glue between the episode loop and the ``r1`` adapter: returns → effects, tool hints, official names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reharness.runtime.effects import HARNESS_R1_ALIASES, Effect
from reharness.runtime.r1.adapter import Proposal, R1Adapter
from reharness.runtime.r1.normalise import normalise, to_effects

#: reharness hook point → Harness-R1 hook name.
OFFICIAL: dict[str, str] = {point: name for name, point in HARNESS_R1_ALIASES.items()}
TOOL_HINT_HEADER = "Additional reusable tool-use hint from the harness:"
TIPS_HEADER = "Some tips that may help for this task:"


def r1_effects(
    point: str,
    value: Any,
    ctx: dict[str, Any],
    overlay: str,
    adapter: R1Adapter,
    proposal: Proposal | None,
) -> list[Effect]:
    """The runtime effects of an r1 hook's return ``value`` (official normalisation, benchmark rules)."""
    normalised = normalise(OFFICIAL[point], value, ctx.get("admissible"))
    effects = to_effects(point, normalised, overlay)
    out = []
    for effect in effects:
        if effect.action is not None:
            effect = adapter.effect_action(effect, proposal if point == "before_action" else None)
        out.append(effect)
    return out


def with_tool_hints(
    tools: tuple[dict[str, Any], ...], hints: list[str], target: str
) -> tuple[dict[str, Any], ...]:
    """Append tool hints to the description of the ``target`` tool, or of every tool (``"*"``): WebShop's
    convention is every tool, ALFWorld's ``take_action`` (the adapter's ``tool_hint_target``)."""
    out = []
    for tool in tools:
        function = dict(tool.get("function", {}))
        if target == "*" or function.get("name") == target:
            text = str(function.get("description", ""))
            for hint in hints:
                if hint not in text:
                    text = f"{text}\n\n{hint}" if text else hint
            function["description"] = text
        out.append(dict(tool, function=function))
    return tuple(out)


def system_additions(tips: list[str], tool_hints: list[str]) -> str:
    """The system-prompt text of r1 ``on_init`` skills and (DBBench, text protocols) tool hints."""
    text = ""
    if tips:
        text += f"\n\n{TIPS_HEADER}\n" + "\n".join(f"- {t}" for t in tips)
    if tool_hints:
        text += f"\n\n{TOOL_HINT_HEADER} " + " ".join(tool_hints)
    return text


@dataclass
class R1Call:
    """The official ctx of one hook call: built on demand for the action currently scheduled."""

    adapter: R1Adapter
    hook: str
    step: int
    proposal: Proposal | None = None

    def ctx(self, scheduled: str | None) -> dict[str, Any]:
        proposal = self.proposal
        if proposal is not None and scheduled is not None:
            proposal = proposal.scheduled(scheduled)
        return self.adapter.ctx(self.hook, self.step, proposal)


def apply_init(
    effects: list[Effect],
    convo: Any,
    tools: tuple[dict[str, Any], ...],
    adapter: R1Adapter | None,
    r1_names: frozenset[str],
) -> tuple[dict[str, Any], ...]:
    """Apply honoured ``on_init`` effects to the conversation; returns the episode's tools.

    reharness skills go under "Harness notes", r1 skills under Harness-R1's tips header; r1 tool hints go
    into the tool descriptions (the adapter's ``tool_hint_target``: WebShop, ALFWorld with tools) or the
    system prompt (DBBench, text protocols).
    """
    for effect in effects:
        (convo.tips if effect.overlay in r1_names else convo.skills).extend(effect.skills)
    hints = [e.text for e in effects if e.kind == "tool_hint" and e.text]
    target = adapter.tool_hint_target if adapter is not None else None
    if hints and tools and target is not None:
        return with_tool_hints(tools, hints, target)
    convo.tool_hints.extend(hints)
    return tools


def unpack_blocks(overlay: Any, point: str, value: Any) -> tuple[list[Any], list[str]]:
    """The return values of a hook repeated in one r1 patch (``overlay.blocks[point] > 1``) and the errors
    of its failing blocks; a hook with one block gives ``([value], [])``."""
    if getattr(overlay, "blocks", {}).get(point, 1) <= 1 or not isinstance(value, dict):
        return [value], []
    values, errors = [], []
    for block in value.get("r1_blocks") or []:
        if not isinstance(block, dict):
            continue
        if block.get("ok"):
            values.append(block.get("value"))
        else:
            raw = block.get("error")
            error: dict[str, Any] = raw if isinstance(raw, dict) else {}
            errors.append(
                f"hook {point!r} raised {error.get('type', 'Exception')}: {error.get('msg', '')}"[:1000]
            )
    return values, errors


def r1_outcome(
    overlay: Any, point: str, value: Any, ctx: dict[str, Any], call: R1Call
) -> tuple[list[Effect], list[str]]:
    """The effects of an r1 overlay's hook call (every block of a repeated hook, in order) and the error
    messages of failing blocks."""
    values, failed = unpack_blocks(overlay, point, value)
    effects = [
        e for v in values for e in r1_effects(point, v, ctx, overlay.name, call.adapter, call.proposal)
    ]
    return effects, failed
