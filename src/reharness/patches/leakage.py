"""Leakage checks: patch constants must not copy task-specific facts from the failure evidence.

A patch is meant to fix a *recurring failure mode*; a patch that hard-codes the task ids, the answers or the
numbered object instances ("mug 1", "cabinet 12") it saw in the failure packet only memorises the batch
(Harness-R1 rejects product ids, task indices and numbered object instances, REFERENCE.md §1). The check looks
at string constants (and the text of numeric constants) in the code. Matching is case-insensitive and
respects word boundaries, so an answer "red" does not match "colored". Integer indices used to pick tasks out
of a list are out of scope.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

#: A numbered object instance: a word followed by a number ("mug 1", "cabinet 12").
NUMBERED_INSTANCE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z][A-Za-z-]*)\s+(\d+)(?![A-Za-z0-9_])")
#: Task ids and answers shorter than this are too common to count as leakage ("1", "no").
MIN_LEAK_CHARS = 3


def _bounded(values: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any of ``values`` as a whole token (not inside a longer word)."""
    alternatives = sorted(
        {v.strip() for v in values if len(v.strip()) >= MIN_LEAK_CHARS}, key=len, reverse=True
    )
    if not alternatives:
        return None
    body = "|".join(re.escape(v) for v in alternatives)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)


def _instance_key(word: str, number: str) -> str:
    return f"{word.lower()} {int(number)}"


@dataclass(frozen=True)
class LeakageEvidence:
    """Task-specific facts from the failure evidence that a patch must not contain.

    ``task_ids`` and ``answers`` match as whole tokens when at least :data:`MIN_LEAK_CHARS` long.
    ``object_instances`` ("mug 1", or any text containing them) name object types whose numbered instances
    count as leaks, as do the types in ``object_types``: "cabinet 12" leaks when "cabinet 3" was seen.
    ``any_numbered_instance`` flags every ``<word> <number>`` (strict; also flags "after 3").
    """

    task_ids: Sequence[str] = ()
    answers: Sequence[str] = ()
    object_instances: Sequence[str] = ()
    object_types: Sequence[str] = ()
    any_numbered_instance: bool = False
    _task_ids: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _answers: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _types: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("task_ids", "answers", "object_instances", "object_types"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"LeakageEvidence.{name} must be a list of strings, not one string")
            object.__setattr__(self, name, tuple(str(v) for v in value))
        instances = {
            _instance_key(w, n) for text in self.object_instances for w, n in NUMBERED_INSTANCE.findall(text)
        }
        types = {key.split(" ")[0] for key in instances}
        types.update(t.strip().lower().split(" ")[-1] for t in self.object_types if t.strip())
        object.__setattr__(self, "_task_ids", _bounded(self.task_ids))
        object.__setattr__(self, "_answers", _bounded(self.answers))
        object.__setattr__(self, "_types", frozenset(types))

    def is_empty(self) -> bool:
        return not (
            self.task_ids
            or self.answers
            or self.object_instances
            or self.object_types
            or self.any_numbered_instance
        )

    def find(self, text: str) -> str | None:
        """Describe the first leaked fact in ``text`` (for the error message), or ``None``."""
        for pattern, label in ((self._task_ids, "task id"), (self._answers, "answer value")):
            match = pattern.search(text) if pattern is not None else None
            if match:
                return f"{label} {match.group(0)!r}"
        if not (self._types or self.any_numbered_instance):
            return None
        for word, number in NUMBERED_INSTANCE.findall(text):
            key = _instance_key(word, number)
            if self.any_numbered_instance or key.split(" ")[0] in self._types:
                return f"numbered object instance {word + ' ' + number!r}"
        return None
