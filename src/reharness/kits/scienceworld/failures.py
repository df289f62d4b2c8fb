"""Failure detectors for ScienceWorld episodes (plain functions ``record -> list[Finding]``).

- :func:`menu_misuse`: the game asked which object was meant (``Ambiguous request: Please enter the number
  …``, a menu whose numbers are not in the valid-action list) and the agent answered with a command instead
  of a number → ``invalid_action``;
- :func:`wrong_focus`: ``focus on X`` ended the episode as a failure (ScienceWorld sets the score to −100 when
  the focused object is not the task's) → ``wrong_answer``;
- the text-game detectors of :mod:`reharness.kits.twx.failures` (``look around`` loops, invalid commands).
"""

from __future__ import annotations

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.kits.twx.failures import text_game_findings
from reharness.store.records import EpisodeRecord

AMBIGUOUS = "Ambiguous request"


def menu_misuse(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    executed = [s for s in record.steps if s.action is not None]
    wrong = [
        later.index
        for earlier, later in zip(executed, executed[1:], strict=False)
        if earlier.observation.startswith(AMBIGUOUS) and not (later.action or "").strip().isdigit()
    ]
    if not wrong:
        return []
    detail = (
        "answered a numbered disambiguation menu with a command; reply with the option's number (0, 1, …)"
    )
    return [Finding(FailureCode.INVALID_ACTION, tuple(wrong), detail)]


def wrong_focus(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    for step in record.steps:
        action = (step.action or "").strip().lower()
        if action.startswith("focus on") and step.terminated:
            detail = f"{action!r} focused on the wrong object: ScienceWorld ended the task at -100"
            return [Finding(FailureCode.WRONG_ANSWER, (step.index,), detail)]
    return []


def scienceworld_findings(record: EpisodeRecord) -> list[Finding]:
    """Every ScienceWorld detector (its own and the text-game ones)."""
    return [*menu_misuse(record), *wrong_focus(record), *text_game_findings(record)]
