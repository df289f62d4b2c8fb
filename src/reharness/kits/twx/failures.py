"""Failure detectors for text games (TextWorldExpress, shared with ScienceWorld), on recorded episodes.

Each detector is a plain function ``record -> list[Finding]`` (the kit API's ``detectors`` field) that adds
evidence the generic detectors do not give:

- :func:`look_loops`: the agent keeps re-reading the room — ``look around`` (or ``look`` / ``inventory``)
  at least :data:`LOOK_LOOP` times within :data:`LOOK_WINDOW` consecutive executed actions, even with other
  actions between (the generic ``repeated_action`` needs the same action back to back) → ``repeated_action``;
- :func:`invalid_commands`: steps the game flagged invalid, with the command's verb in the detail, so a
  packet says *what* kind of command fails (``take``, ``go``, a made-up verb) → ``invalid_action``.
"""

from __future__ import annotations

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.store.records import EpisodeRecord

LOOK_LOOP = 4
LOOK_WINDOW = 6
_LOOKS = frozenset({"look around", "look", "inventory"})


def _executed(record: EpisodeRecord) -> list[tuple[int, str]]:
    return [
        (s.index, " ".join(s.action.strip().lower().split())) for s in record.steps if s.action is not None
    ]


def look_loops(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    actions = _executed(record)
    for start in range(len(actions)):
        window = actions[start : start + LOOK_WINDOW]
        looks = [index for index, action in window if action in _LOOKS]
        if len(looks) >= LOOK_LOOP:
            detail = f"re-read the room {len(looks)} times in {len(window)} actions (look around / inventory)"
            return [Finding(FailureCode.REPEATED_ACTION, tuple(looks), detail)]
    return []


def invalid_commands(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    bad = [(s.index, (s.action or "").split()[:1]) for s in record.steps if "invalid_action" in s.flags]
    if not bad:
        return []
    verbs = sorted({words[0].lower() if words else "(empty)" for _, words in bad})
    detail = f"{len(bad)} command(s) not in the game's valid list; verbs: {', '.join(verbs[:6])}"
    return [Finding(FailureCode.INVALID_ACTION, tuple(i for i, _ in bad), detail)]


def text_game_findings(record: EpisodeRecord) -> list[Finding]:
    """Every text-game detector of this module."""
    return [*look_loops(record), *invalid_commands(record)]
