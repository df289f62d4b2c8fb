"""Secret redaction: one function, :func:`redact`, applied wherever text leaves the process.

A model server can echo the API key back (a 401 body that quotes the ``Authorization`` header), and an
error message travels from the backend into the trajectory, ``run.json``, the reports and the terminal.
So every boundary — the store's writes (:mod:`reharness.runtime.executor` redacts each record before it is
appended), the files ``improve`` writes, and the CLI's printed summaries and errors — passes its text through
:func:`redact`, which replaces with :data:`REDACTED`:

- every value given to :func:`register_secret` (the OpenAI backend registers the key it sends), and every
  environment variable whose name ends in ``API_KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD`` (8 characters or
  more), both as written and as it appears inside a JSON string (escaped);
- anything that looks like an API key (``sk-…``, as OpenAI, Anthropic and many OpenAI-compatible servers
  issue them), a ``Bearer`` token, and the password of a URL (``https://user:PASSWORD@host``).

The replacement holds no character that JSON escapes, so redacting a serialised JSON document leaves it
valid JSON.
"""

from __future__ import annotations

import json
import os
import re
import threading
from functools import lru_cache
from typing import Any, TypeVar

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8

_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
_PATTERNS = (
    r"\bsk-[A-Za-z0-9_\-]{8,}",  # OpenAI-style keys (sk-..., sk-proj-..., sk-ant-...)
    r"(?<=[Bb]earer )[A-Za-z0-9._~+/=\-]{8,}",  # bearer tokens
    r"(?<=://)[^/\s:@\"']+:[^/\s@\"']+(?=@)",  # user:password@ in URLs
)
_MARKERS = ("sk-", "earer ", "@")  # every match of _PATTERNS contains one of these
_registered: set[str] = set()
_lock = threading.Lock()
T = TypeVar("T")


def register_secret(value: str | None) -> None:
    """Redact ``value`` from everything stored or printed from now on (short values are ignored)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


def _secrets() -> frozenset[str]:
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_LENGTH}
    with _lock:
        values |= _registered
    return frozenset(values)


@lru_cache(maxsize=8)
def _compiled(secrets: frozenset[str]) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The pattern of every secret, and the substrings without which none can match (a fast pre-check)."""
    forms = {form for s in secrets for form in (s, json.dumps(s)[1:-1])}
    literal = [re.escape(f) for f in sorted(forms, key=len, reverse=True)]
    return re.compile("|".join([*literal, *_PATTERNS])), (*forms, *_MARKERS)


def redact(text: str) -> str:
    """``text`` with every secret (see the module docstring) replaced by :data:`REDACTED`."""
    if not text:
        return text
    pattern, markers = _compiled(_secrets())
    if not any(marker in text for marker in markers):  # substring scans: far cheaper than the regex
        return text
    return pattern.sub(REDACTED, text)


def redact_data(value: T) -> T:
    """Redact every string inside ``value`` (dicts, lists and tuples are walked; keys are kept)."""
    data: Any = value
    if isinstance(data, str):
        return redact(data)  # type: ignore[return-value]
    if isinstance(data, dict):
        return {k: redact_data(v) for k, v in data.items()}  # type: ignore[return-value]
    if isinstance(data, list | tuple):
        return type(data)(redact_data(v) for v in data)  # type: ignore[return-value]
    return value
