"""Action protocols: model output → environment action, and the inverse for scripted agents.

- ``text``: the action is the last line starting with ``Action:`` (case-insensitive); a reply that is a
  single line without that prefix is taken as the action itself (ALFWorld/WebShop agents often answer so).
- ``raw``: the whole reply is the environment action (DBBench v0.2, where the env parses its own pattern).
- ``tools``: the first OpenAI-style tool call, translated by the environment's ``action_from_tool_call``.

Rendering (:func:`render_action`) is the exact inverse, so scripted solvers and demonstrations speak the same
protocol a language model is prompted with.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2  # type: ignore[import-untyped]  # linear-time: agent text cannot backtrack

from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatResponse, ToolCall

# RE2 (linear time, leftmost-first like ``re``): Python's engine is quadratic on long runs of spaces or blank
# lines in a reply (2 s at 20,000 characters), and replies come from the model.
_ACTION_LINE = re2.compile(r"(?mi)^\s*action\s*:\s*(.+?)\s*$")


@dataclass(frozen=True)
class ParsedAction:
    """The action parsed from one reply, or why none could be parsed."""

    action: str | None
    error: str | None = None
    tool_call: ToolCall | None = None


def parse_action(protocol: str, response: ChatResponse, env: TextEnvLike) -> ParsedAction:
    """Parse ``response`` under ``protocol``; never raises for malformed model output."""
    if protocol == "tools":
        if not response.tool_calls:
            return ParsedAction(None, "no tool call in the reply")
        call = response.tool_calls[0]
        try:
            return ParsedAction(env.action_from_tool_call(call.name, call.arguments), tool_call=call)
        except (ValueError, TypeError, KeyError) as exc:
            return ParsedAction(None, f"bad tool call {call.name!r}: {exc}", tool_call=call)
    text = response.text or ""
    if not text.strip():
        return ParsedAction(None, "empty reply")
    if protocol == "raw":
        return ParsedAction(text.strip())
    matches = _ACTION_LINE.findall(text)
    if matches:
        return ParsedAction(matches[-1].strip().lstrip(">").strip())
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) == 1 and not lines[0].lower().startswith("think"):
        return ParsedAction(lines[0].lstrip(">").strip())
    return ParsedAction(None, "no line starting with 'Action:'")


def render_action(protocol: str, action: str, env: TextEnvLike, thought: str | None = None) -> ChatResponse:
    """Render an env action as the reply a model following ``protocol`` would give."""
    if protocol == "tools":
        name, arguments = env.tool_call_from_action(action)
        return ChatResponse(
            text=thought or "", tool_calls=(ToolCall(name=name, arguments=arguments, id="call_0"),)
        )
    if protocol == "raw":
        return ChatResponse(text=f"{thought}\n{action}" if thought else action)
    return ChatResponse(text=(f"Think: {thought}\n" if thought else "") + f"Action: {action}")
