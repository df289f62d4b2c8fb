"""What every model backend shares: the tool-call text convention and message conversion.

Backends implement :class:`reharness.runtime.agents.Agent` (``async complete(ChatRequest) -> ChatResponse``).
Errors that reach a backend — HTTP faults, malformed server replies, a prompt longer than the model's
context — are returned as ``ChatResponse(error=...)`` so that the episode records them; a backend never raises
out of ``complete``.

**Tool calls in text** (used by in-process Hugging Face models, which produce text only). A tool call is a
JSON object with ``name`` and ``arguments`` between ``<tool_call>`` and ``</tool_call>`` — the Hermes/Qwen
convention most open chat templates already use::

    Think: the mug is on the counter.
    <tool_call>{"name": "act", "arguments": {"action": "take mug 1 from countertop 2"}}</tool_call>

A call whose JSON cannot be parsed is not dropped: it becomes a :class:`ToolCall` whose ``arguments`` hold
the raw text under :data:`RAW_ARGUMENTS` and the parse error under :data:`ARGUMENTS_ERROR`, so the episode
records a format error with the model's own text instead of crashing or silently losing the call.
"""

from __future__ import annotations

import json
import re
from typing import Any

import re2  # type: ignore[import-untyped]  # linear-time: agent text cannot backtrack

from reharness.core.types import Message, ToolCall

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
RAW_ARGUMENTS = "_raw_arguments"
ARGUMENTS_ERROR = "_arguments_error"
INVALID_TOOL_NAME = "invalid_tool_call"

# RE2 (linear time, leftmost-first like ``re``): ``re`` is quadratic on a long whitespace run inside a call.
_TOOL_CALL = re2.compile(r"(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)")
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')


def context_overflow(prompt_tokens: int, context_length: int) -> str:
    """The error of a request whose prompt fills the model's context, with both ways to shorten what is sent:
    an agent's prompt grows with the harness's history, an engineer's with the prompt it is asked with."""
    return (
        f"prompt has {prompt_tokens} tokens; the model's context is {context_length} (shorten the prompt: "
        "an agent's with the harness's history_window, an engineer's with --engineer-prompt compact or "
        "--engineer-language program; experiment r1's editor: --editor-prompt compact)"
    )


def malformed_tool_call(name: str | None, raw: str, error: str, call_id: str | None = None) -> ToolCall:
    """A tool call whose arguments could not be parsed: the raw text and the reason are kept as data."""
    return ToolCall(
        name=name or INVALID_TOOL_NAME,
        arguments={RAW_ARGUMENTS: raw[:2000], ARGUMENTS_ERROR: error},
        id=call_id,
    )


def parse_arguments(name: str, raw: Any, call_id: str | None = None) -> ToolCall:
    """Build a tool call from OpenAI-style ``arguments`` (a JSON string, or already an object)."""
    if isinstance(raw, dict):
        return ToolCall(name=name, arguments=raw, id=call_id)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return ToolCall(name=name, arguments={}, id=call_id)
    if not isinstance(raw, str):
        error = f"arguments must be a JSON object, got {type(raw).__name__}"
        return malformed_tool_call(name, repr(raw), error, call_id)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return malformed_tool_call(name, raw, f"arguments are not valid JSON: {exc}", call_id)
    if not isinstance(value, dict):
        return malformed_tool_call(name, raw, "arguments must be a JSON object", call_id)
    return ToolCall(name=name, arguments=value, id=call_id)


def parse_text_tool_calls(text: str) -> tuple[ToolCall, ...]:
    """Tool calls written as ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` in ``text``.

    An unterminated last block (the model hit ``max_tokens``) is still parsed; ids are ``call_<i>``.
    """
    calls: list[ToolCall] = []
    for i, match in enumerate(_TOOL_CALL.finditer(text)):
        body, call_id = match.group(1), f"call_{i}"
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            found = _NAME.search(body)
            calls.append(
                malformed_tool_call(
                    found.group(1) if found else None, body, f"not valid JSON: {exc}", call_id
                )
            )
            continue
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            calls.append(malformed_tool_call(None, body, 'expected {"name": …, "arguments": {…}}', call_id))
            continue
        calls.append(parse_arguments(value["name"], value.get("arguments", {}), call_id))
    return tuple(calls)


def strip_tool_calls(text: str) -> str:
    """``text`` without its ``<tool_call>`` blocks (the assistant's plain content)."""
    return _TOOL_CALL.sub("", text).strip()


def arguments_json(call: ToolCall) -> str:
    """The arguments as the JSON string OpenAI expects; a malformed call is replayed verbatim."""
    if set(call.arguments) == {RAW_ARGUMENTS, ARGUMENTS_ERROR}:
        return str(call.arguments[RAW_ARGUMENTS])
    return json.dumps(call.arguments, ensure_ascii=False)


def render_tool_call(call: ToolCall) -> str:
    """A tool call in the text convention (the inverse of :func:`parse_text_tool_calls`)."""
    if set(call.arguments) == {RAW_ARGUMENTS, ARGUMENTS_ERROR}:
        return f"{TOOL_CALL_OPEN}{call.arguments[RAW_ARGUMENTS]}{TOOL_CALL_CLOSE}"
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"{TOOL_CALL_OPEN}{body}{TOOL_CALL_CLOSE}"


def openai_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Messages in the OpenAI chat-completions wire format."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments_json(c)},
                }
                for i, c in enumerate(m.tool_calls)
            ]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def template_messages(
    messages: tuple[Message, ...] | list[Message], structured_tool_calls: bool = False
) -> list[dict[str, Any]]:
    """Messages for a Hugging Face chat template — the one rendering used for inference *and* training.

    Assistant tool calls are written into the content in the ``<tool_call>`` convention unless the content
    already holds them (a reply of an in-process model keeps its raw text, so history is re-tokenised from
    exactly what the model produced). With ``structured_tool_calls`` (templates that render ``tool_calls``
    themselves, e.g. Qwen's) calls that are not in the content are passed as OpenAI-style dicts instead.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls and TOOL_CALL_OPEN not in m.content:
            if structured_tool_calls:
                item["tool_calls"] = [
                    {"type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            else:
                rendered = "\n".join(render_tool_call(c) for c in m.tool_calls)
                item["content"] = f"{m.content}\n{rendered}" if m.content else rendered
        out.append(item)
    return out
