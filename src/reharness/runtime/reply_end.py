"""Where a reply's action ends: the parse-complete check a backend may stop decoding at.

A model trained on the protocol stops after its action by itself; a pretrained model that was never shown
it goes on (more prose, a second action, an invented observation) until its token budget: SmolLM2-135M's
ALFWorld-like replies ran to the 512-token limit. :func:`reply_complete` gives, for a protocol and an env, the
check ``complete(reply_so_far)`` that is true once the reply holds a whole action, so a backend with
``end_at_action`` stops there (the request's ``complete``; remote backends ignore it):

- ``text``: a line ``Action: …`` ended by a newline;
- ``raw`` (DBBench v0.2, agent-written code): a fenced code block closed, or a ``Final Answer: …`` line ended;
- ``tools``: a ``</tool_call>`` closed.

An env may define its own ``reply_complete(text) -> bool``, which wins. A reply cut at the check parses as
it would have with the rest dropped, except under ``text``, where the *first* complete action line is then
the one taken (the parser takes the last).
"""

from __future__ import annotations

from collections.abc import Callable

import re2  # type: ignore[import-untyped]  # linear-time: the reply is the model's

from reharness.core.env_protocol import TextEnvLike

_ACTION_LINE_ENDED = re2.compile(r"(?mi)^[ \t]*action[ \t]*:[ \t]*\S[^\n]*\n")
_FENCE_CLOSED = re2.compile(r"```[^\n]*\n[\s\S]*?\n[ \t]*```")
_FINAL_ANSWER_ENDED = re2.compile(r"(?m)^[ \t]*Final Answer:[^\n]*\S[^\n]*\n")


def _text_complete(text: str) -> bool:
    return _ACTION_LINE_ENDED.search(text) is not None


def _raw_complete(text: str) -> bool:
    return _FENCE_CLOSED.search(text) is not None or _FINAL_ANSWER_ENDED.search(text) is not None


def _tools_complete(text: str) -> bool:
    return "</tool_call>" in text


_BY_PROTOCOL: dict[str, Callable[[str], bool]] = {
    "text": _text_complete,
    "raw": _raw_complete,
    "tools": _tools_complete,
}


def reply_complete(protocol: str, env: TextEnvLike) -> Callable[[str], bool] | None:
    """The parse-complete check of ``protocol`` (or the env's own ``reply_complete``)."""
    custom = getattr(env, "reply_complete", None)
    if callable(custom):
        return custom  # type: ignore[no-any-return]
    return _BY_PROTOCOL.get(protocol)
