"""Text handling for failure packets: head + tail trimming and masking of task-specific values.

Masking removes what would tempt an engineer to encode a task's answer instead of fixing a failure mode
(REFERENCE.md §1: patches must not contain product ids, task indices or numbered object instances, and
leakage checks reject them). What to mask is the environment kit's knowledge (``EnvKit.mask_rules``, a
sequence of :class:`MaskRule`); the kinds of masking are generic:

- ``alias``: each distinct match becomes ``<LABEL-N>``, numbered per trace in order of first appearance, so
  the trace still shows *which* listed item the agent opened (product ids become ``<product-N>``);
- ``answer``: group 2 of the match (an answer's text) keeps its shape but not its values: each value becomes
  ``<number>`` or ``<text>`` (a malformed answer becomes ``<answer>``), so format mistakes stay visible;
- ``json_answer``: the same for a JSON value (an ``answers`` tool-call argument).

Task ids never appear in the rendered text at all (traces are numbered by their position in the packet).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from reharness.envs.registry import find_kit

#: Marker put where :func:`trim` cut text out; ``{n}`` is the number of characters removed.
TRIM_MARKER = " …[{n} chars trimmed]… "


@dataclass(frozen=True)
class MaskRule:
    """One masking rule of a kit: a regex, the kind of masking, and the count it adds to (``counts``)."""

    pattern: str
    kind: Literal["alias", "answer", "json_answer"]
    count: str
    label: str = "item"
    flags: int = 0
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern, self.flags))


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
    """Masks one trace's texts consistently (the same id gets the same alias everywhere in it), by the rules
    of the env's kit (none for an environment whose kit is not installed here)."""

    def __init__(self, env: str) -> None:
        self.env = env
        kit = find_kit(env)
        self.rules: tuple[MaskRule, ...] = tuple(kit.mask_rules) if kit is not None else ()
        self.aliases: dict[str, dict[str, str]] = {}
        self.counts: dict[str, int] = {"answers": 0, "product_ids": 0} | {r.count: 0 for r in self.rules}

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for rule in self.rules:
            text = rule.compiled.sub(lambda m, r=rule: self._mask(r, m), text)  # type: ignore[misc]
        return text

    def _mask(self, rule: MaskRule, match: re.Match[str]) -> str:
        if rule.kind == "alias":
            seen = self.aliases.setdefault(rule.count, {})
            key = match.group(0).lower()
            if key not in seen:
                seen[key] = f"<{rule.label}-{len(seen) + 1}>"
                self.counts[rule.count] = len(seen)
            return seen[key]
        self.counts[rule.count] += 1
        if rule.kind == "answer":
            return match.group(1) + _answer_shape(match.group(2))
        try:
            value = json.loads(match.group(2))
        except ValueError:
            return match.group(1) + '"<answer>"'
        return match.group(1) + json.dumps(_shape(value), ensure_ascii=False)


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
