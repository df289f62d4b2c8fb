"""Text handling for failure packets: head + tail trimming and masking of task-specific values.

Masking removes what would tempt an engineer to encode a task's answer instead of fixing a failure mode
(REFERENCE.md §1: patches must not contain product ids, task indices or numbered object instances, and
leakage checks reject them):

- shop product ids (``b0g72slzqu``) become ``<product-N>``, numbered per trace in order of first appearance,
  so the trace still shows *which* listed product the agent opened and bought;
- db answers the agent committed (``Final Answer: [...]``, or the ``answers`` argument of a
  ``commit_final_answer`` tool call) keep their shape but not their values: each value becomes ``<number>``
  or ``<text>`` (a malformed answer becomes ``<answer>``), so format mistakes stay visible;
- household numbered instances ("mug 1", "cabinet 12") are **kept**: commands must name them, so a trace
  without them would not show what the agent did. Patches that copy them are rejected by
  :mod:`reharness.patches.leakage` instead.

Task ids never appear in the rendered text at all (traces are numbered by their position in the packet).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from reharness.failures.evidence import PRODUCT_ID

#: Marker put where :func:`trim` cut text out; ``{n}`` is the number of characters removed.
TRIM_MARKER = " …[{n} chars trimmed]… "
_FINAL_ANSWER = re.compile(r"(Final Answer:[ \t]*)([^\n]*)")
_TOOL_ANSWERS = re.compile(r'("answers"\s*:\s*)(\[[^\]]*\]|"(?:[^"\\]|\\.)*")')


def trim(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail around :data:`TRIM_MARKER`.

    The head keeps ``ceil(limit / 2)`` characters and the tail ``floor(limit / 2)``, so the result holds
    exactly ``limit`` characters of the original (plus the marker).
    """
    if limit <= 0 or len(text) <= limit:
        return text
    head = (limit + 1) // 2
    tail = limit - head
    cut = len(text) - head - tail
    return text[:head] + TRIM_MARKER.format(n=cut) + (text[-tail:] if tail else "")


class Masker:
    """Masks one trace's texts consistently (the same product id gets the same alias everywhere in it)."""

    def __init__(self, env: str) -> None:
        self.env = env
        self.products: dict[str, str] = {}
        self.answers = 0

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self.env == "shop":
            text = PRODUCT_ID.sub(self._product, text)
        elif self.env == "db":
            text = _FINAL_ANSWER.sub(self._final_answer, text)
            text = _TOOL_ANSWERS.sub(self._tool_answers, text)
        return text

    def _product(self, match: re.Match[str]) -> str:
        key = match.group(0).lower()
        if key not in self.products:
            self.products[key] = f"<product-{len(self.products) + 1}>"
        return self.products[key]

    def _final_answer(self, match: re.Match[str]) -> str:
        self.answers += 1
        return match.group(1) + _answer_shape(match.group(2))

    def _tool_answers(self, match: re.Match[str]) -> str:
        self.answers += 1
        try:
            value = json.loads(match.group(2))
        except ValueError:
            return match.group(1) + '"<answer>"'
        return match.group(1) + json.dumps(_shape(value), ensure_ascii=False)

    @property
    def counts(self) -> dict[str, int]:
        """How many distinct product ids and how many answers were masked."""
        return {"answers": self.answers, "product_ids": len(self.products)}


def _answer_shape(raw: str) -> str:
    if not raw.strip():
        return raw
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "<answer>"
    return json.dumps(_shape(value), ensure_ascii=False)


def _shape(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_shape(v) for v in value]
    if isinstance(value, bool) or value is None:
        return "<text>"
    if isinstance(value, int | float):
        return "<number>"
    try:
        float(str(value).replace(",", ""))
        return "<number>"
    except ValueError:
        return "<text>"
