"""household runtime signals and leakage facts: "Nothing happens." answers, numbered object instances.

Numbered instances ("mug 1", "cabinet 12") are kept in packets (commands must name them, so a trace without
them would not show what the agent did); patches that copy them are rejected by the leakage check instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from reharness.failures.evidence import executed, normalise
from reharness.patches.leakage import NUMBERED_INSTANCE
from reharness.store.records import EpisodeRecord

#: The environment's answer to an inadmissible command.
NOTHING_HAPPENS = "Nothing happens."


def signals(record: EpisodeRecord) -> dict[str, int | float]:
    """``nothing_happens``: executed commands the environment answered with "Nothing happens."."""
    return {
        "nothing_happens": sum(
            normalise(s.observation) == NOTHING_HAPPENS for s in record.steps if executed(s)
        )
    }


def leakage(text: str) -> Iterator[tuple[str, str]]:
    """Numbered object instances in ``text``: facts a patch must not copy."""
    for word, number in NUMBERED_INSTANCE.findall(text):
        yield "object_instances", f"{word.lower()} {int(number)}"
