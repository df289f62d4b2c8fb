"""Reading a recorded trajectory: per-step facts shared by the detectors and the runtime signals.

Everything here looks only at an :class:`~reharness.store.records.EpisodeRecord` (actions, observations,
flags, outcome), never at the environment's hidden state, so the same facts can be recomputed from any stored
run. Environment-specific readings live in each environment's kit (``EnvKit.detectors``, ``signals``,
``action_key``); this module holds the generic ones.
"""

from __future__ import annotations

from reharness.envs.registry import find_kit
from reharness.store.records import EpisodeRecord, StepRecord

#: Prefix of the runtime's parse error for a tool call it could not translate (unknown tool, bad arguments).
BAD_TOOL_CALL = "bad tool call"


def normalise(text: str) -> str:
    """Whitespace-collapsed text: the unit of "same observation" and "same action"."""
    return " ".join(text.split())


def executed(step: StepRecord) -> bool:
    """Whether the step's action reached the environment and returned (not blocked, unparsed or crashed)."""
    return step.action is not None and "env_error" not in step.flags


# ---------------------------------------------------------------------------------------------- generic
def action_key(env: str, action: str) -> str:
    """What makes two actions "the same": the env's kit decides (``EnvKit.action_key``: db compares the
    statement), otherwise the whitespace-collapsed, lower-cased command text."""
    kit = find_kit(env)
    if kit is not None and kit.action_key is not None:
        return str(kit.action_key(action))
    return normalise(action).lower()


def stale_steps(record: EpisodeRecord) -> list[bool]:
    """Per step: whether its observation (or the harness message shown instead) was already seen in this
    episode, counting the initial observation."""
    seen = {normalise(record.initial_observation)}
    stale: list[bool] = []
    for step in record.steps:
        text = normalise(step.observation)
        stale.append(text in seen)
        seen.add(text)
    return stale


def runs(flags: list[bool]) -> list[tuple[int, int]]:
    """Maximal runs of ``True`` as ``(start, length)`` pairs."""
    found: list[tuple[int, int]] = []
    start = None
    for i, value in enumerate([*flags, False]):
        if value and start is None:
            start = i
        elif not value and start is not None:
            found.append((start, i - start))
            start = None
    return found
