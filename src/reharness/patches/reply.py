"""Extraction of a patch from an engineer's reply ``<think>…</think><patch>{json}</patch>``.

Rules (Harness-R1 parses only complete think/patch blocks, REFERENCE.md §1):

- a ``<think>`` block, when present, must be closed; ``<patch>`` tags inside the thinking are drafts and are
  ignored;
- the *last* ``<patch>…</patch>`` block after the thinking is the answer (models sometimes restate);
  a ``<patch>`` without its ``</patch>`` (a truncated reply) is an error;
- the block holds JSON of either schema; Markdown code fences around it are tolerated.

Failures are :class:`~reharness.patches.errors.PatchFormatError` with the stable codes ``no_patch_tag``,
``unterminated_patch_tag``, ``unterminated_think``, ``invalid_json`` and ``wrong_schema`` (plus the field
codes of :meth:`~reharness.patches.model.Patch.from_dict`).
"""

from __future__ import annotations

import re

from reharness.patches.documents import MAX_DOCUMENT_BYTES, format_error, parse_json
from reharness.patches.model import HARNESS_R1_SCHEMA, SCHEMA_VERSION, Patch

_SOURCE = "<reply>"
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_PATCH_OPEN = re.compile(r"<patch>", re.IGNORECASE)
_PATCH_CLOSE = re.compile(r"</patch>", re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)


def after_thinking(reply: str) -> str:
    """The reply after its (closed) ``<think>`` block; an unclosed one is ``unterminated_think``."""
    closes = list(_THINK_CLOSE.finditer(reply))
    opens = list(_THINK_OPEN.finditer(reply))
    if opens and (not closes or opens[-1].start() > closes[-1].start()):
        fix = "the reply was cut off while thinking; close </think> and then write <patch>{...}</patch>"
        raise format_error(_SOURCE, None, "<think> is never closed", fix, "unterminated_think")
    return reply[closes[-1].end() :] if closes else reply


def patch_block(reply: str) -> str:
    """The text inside the answer's ``<patch>`` block (code fences removed)."""
    if not isinstance(reply, str):
        raise format_error(
            _SOURCE, None, f"expected text, got {type(reply).__name__}", "pass a string", "no_patch_tag"
        )
    if len(reply) > 4 * MAX_DOCUMENT_BYTES:
        raise format_error(
            _SOURCE, None, "the reply is too large", "keep the patch under 16 KB of code", "too_large"
        )
    answer = after_thinking(reply)
    opens = list(_PATCH_OPEN.finditer(answer))
    if not opens:
        inside = " (there is one inside <think>, which is ignored)" if _PATCH_OPEN.search(reply) else ""
        fix = "end the reply with <patch>{...json...}</patch>"
        raise format_error(_SOURCE, None, "no <patch> tag after the thinking" + inside, fix, "no_patch_tag")
    start = opens[-1].end()
    close = _PATCH_CLOSE.search(answer, start)
    if close is None:
        fix = "the reply was cut off; finish the JSON and close it with </patch>"
        raise format_error(_SOURCE, None, "<patch> is never closed", fix, "unterminated_patch_tag")
    body = answer[start : close.start()].strip()
    fenced = _FENCE.match(body)
    return fenced.group(1).strip() if fenced else body


def extract_patch(reply: str, dialect: str = "reharness") -> Patch:
    """Parse the patch of an engineer's reply (JSON of either schema inside ``<patch>``).

    Engineers are prompted with reharness's ``ctx`` and effect names, so their ``harness-r1-patch-v1``
    replies are read in the ``reharness`` dialect unless ``dialect`` says otherwise.
    """
    body = patch_block(reply)
    if not body:
        raise format_error(
            _SOURCE, None, "the <patch> block is empty", "put the patch JSON inside it", "invalid_json"
        )
    data = parse_json(body, _SOURCE)
    if not isinstance(data, dict) or data.get("schema_version") not in (SCHEMA_VERSION, HARNESS_R1_SCHEMA):
        got = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        fix = f'the JSON must be an object with "schema_version": "{SCHEMA_VERSION}" or "{HARNESS_R1_SCHEMA}"'
        raise format_error(_SOURCE, "schema_version", f"wrong schema ({got!r})", fix, "wrong_schema")
    return Patch.from_dict(data, source=_SOURCE, dialect=dialect)
