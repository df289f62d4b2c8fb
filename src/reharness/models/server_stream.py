"""Server-sent-event chunks of a chat completion, as vLLM's OpenAI-compatible server streams them.

The backends answer whole replies, so :func:`completion_chunks` derives the stream from the finished
completion body: per choice, a first chunk with the role, the content in word-sized pieces, one chunk per
tool call (id, name and the whole arguments), then a chunk with ``finish_reason``; with
``stream_options.include_usage`` a last chunk with no choices and the usage. Concatenating the deltas of a
choice gives exactly the non-streamed message (``content``, ``tool_calls``), the property clients rely on.
:func:`sse` frames one event; the stream ends with ``data: [DONE]``.
"""

from __future__ import annotations

import json
import re
from typing import Any

DONE = b"data: [DONE]\n\n"
_PIECE = re.compile(r"\s*\S+|\s+")  # a word with the spaces before it; the pieces rebuild the text


def sse(event: dict[str, Any]) -> bytes:
    """One ``data:`` event."""
    return b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n"


def completion_chunks(completion: dict[str, Any], include_usage: bool = False) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events that stream ``completion`` (choices in turn, as vLLM does)."""
    head = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish} | extra
        return head | {"choices": [choice]}

    per_choice: list[list[dict[str, Any]]] = []
    for choice in completion["choices"]:
        index, message = choice["index"], choice["message"]
        events = [chunk(index, {"role": "assistant", "content": ""})]
        pieces = _PIECE.findall(message.get("content") or "")
        for k, piece in enumerate(pieces):
            logprobs = choice.get("logprobs") if k == len(pieces) - 1 else None
            events.append(chunk(index, {"content": piece}, logprobs=logprobs))
        if not pieces and choice.get("logprobs"):
            events[0]["choices"][0]["logprobs"] = choice["logprobs"]
        for k, call in enumerate(message.get("tool_calls") or []):
            events.append(chunk(index, {"tool_calls": [{"index": k} | call]}))
        extra = {"token_ids": choice["token_ids"]} if "token_ids" in choice else {}
        events.append(chunk(index, {}, choice["finish_reason"], **extra))
        per_choice.append(events)
    # interleave the choices' streams, as a server decoding them together sends them
    out = [e for round_ in _zip_longest(per_choice) for e in round_]
    if include_usage:
        out.append(head | {"choices": [], "usage": completion["usage"]})
    return out


def _zip_longest(streams: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    longest = max((len(s) for s in streams), default=0)
    return [[s[i] for s in streams if i < len(s)] for i in range(longest)]
