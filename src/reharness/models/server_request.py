"""Parsing of chat-completions request bodies for :mod:`reharness.models.server` (schema checks, ``n``,
``stream``): a body that does not follow the schema raises :class:`BadRequest`, whose message names the field,
and the server answers it with a 400.
"""

from __future__ import annotations

import random
from typing import Any

from reharness.core.types import ChatRequest, Message, SamplingParams, ToolCall
from reharness.models.base import parse_arguments

MAX_N = 16

#: Fields that change what a reply may be, which this server does not implement: a request that sets one
#: (to anything but its neutral value) is refused with a 400 naming it, rather than answered as if unset.
_UNSUPPORTED: dict[str, Any] = {
    "stop": lambda v: v in (None, [], ""),
    "logit_bias": lambda v: not v,
    "top_logprobs": lambda v: v in (None, 0),
    "presence_penalty": lambda v: v in (None, 0, 0.0),
    "frequency_penalty": lambda v: v in (None, 0, 0.0),
    "response_format": lambda v: v is None or (isinstance(v, dict) and v.get("type") == "text"),
    "best_of": lambda v: v in (None, 1),
}


def refuse_unsupported(body: dict[str, Any]) -> None:
    """``BadRequest`` naming the first field set that this server does not implement."""
    for name, neutral in _UNSUPPORTED.items():
        if name in body and not neutral(body[name]):
            raise BadRequest(f"'{name}' is not implemented by this server; drop it from the request")


class BadRequest(ValueError):
    """The client's request does not follow the chat-completions schema."""


def choice_options(body: dict[str, Any]) -> tuple[int, bool, bool]:
    """``(n, stream, include_usage)`` of a chat-completions body (``BadRequest`` names a bad field)."""
    refuse_unsupported(body)
    n = body.get("n")
    n = 1 if n is None else n
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise BadRequest(f"'n' must be an integer from 1 to {MAX_N}, got {n!r}")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise BadRequest(f"'stream' must be true or false, got {stream!r}")
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or set(options) - {"include_usage"}):
        raise BadRequest("'stream_options' supports only {'include_usage': true|false}")
    if options is not None and not stream:
        raise BadRequest("'stream_options' is only allowed with 'stream': true")
    return n, bool(stream), bool((options or {}).get("include_usage"))


def request_from_openai(body: Any) -> ChatRequest:
    """Convert an OpenAI chat-completions body into a :class:`ChatRequest` (``BadRequest`` when invalid)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        raise BadRequest("the body must be a JSON object with a non-empty 'messages' list")
    messages = []
    for raw in body["messages"]:
        if not isinstance(raw, dict) or raw.get("role") not in (
            "system",
            "user",
            "assistant",
            "tool",
            "developer",
        ):
            raise BadRequest(f"invalid message: {str(raw)[:200]}")
        content = raw.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls: list[ToolCall] = []
        for call in raw.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            calls.append(parse_arguments(str(fn.get("name", "")), fn.get("arguments"), call.get("id")))
        role = "system" if raw["role"] == "developer" else raw["role"]
        messages.append(
            Message(
                role=role, content=str(content), tool_calls=tuple(calls), tool_call_id=raw.get("tool_call_id")
            )
        )
    seed = body.get("seed")
    try:
        sampling = SamplingParams(
            temperature=float(1.0 if body.get("temperature") is None else body["temperature"]),
            top_p=float(body.get("top_p") or 1.0),
            max_tokens=int(body.get("max_completion_tokens") or body.get("max_tokens") or 512),
        )
        return ChatRequest(
            messages=tuple(messages),
            tools=tuple(body.get("tools") or ()),
            sampling=sampling,
            seed=int(seed) if seed is not None else random.SystemRandom().getrandbits(63),
        )
    except (TypeError, ValueError) as exc:
        raise BadRequest(str(exc)[:500]) from exc
