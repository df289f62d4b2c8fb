"""Harness-R1's ALFWorld ``ctx``, for the TextWorldExpress games (and ScienceWorld, which shares its shape).

The official Harness-R1 exposes for ALFWorld: the proposed ``action`` (raw, normalised, final, whether it is
admissible), ``state`` counters, ``task`` fields, ``predicates``, the ``observation`` and ``admissible`` list,
a short ``history`` and a ``world`` snapshot. This adapter computes the same fields for a text game from
what the agent observed: TextWorldExpress answers an unknown command with ``Unknown action`` where ALFWorld
says ``Nothing happens.`` (counted the same way), the world snapshot holds the current location and
inventory read from the game's own text (``You are in the kitchen.``) and the rooms visited or seen through
exits, never hidden state. ``task`` carries the game as ``task_type``; text games have no target or
destination types, so those fields are empty.
"""

from __future__ import annotations

import re
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.runtime.r1.adapter import Proposal, R1Adapter, alfworld_ctx

ACTIONS_WINDOW = 6
OBSERVATIONS_WINDOW = 4
INVALID_MARKERS = ("unknown action", "no known action matches", "nothing happens")
_ROOM = re.compile(r"you are in the ([a-z -]+)\.")
_EXIT = re.compile(r"to the (?:north|south|east|west) you see the ([a-z -]+)\.")


class TextGameAdapter(R1Adapter):
    """ALFWorld's ctx shape for a text game (see the module docstring)."""

    benchmark = "alfworld"
    tool_hint_target = "take_action"
    shared_fields = frozenset({"observation", "admissible", "max_step"})

    def __init__(self, env: TextEnvLike, max_steps: int) -> None:
        super().__init__(env, max_steps)
        fields = env.task_fields()
        self.task = {
            "task_type": str(fields.get("task_type") or ""),
            "target_type": "",
            "destination_type": "",
        }
        self.actions: list[str] = []
        self.observations: list[str] = []
        self.location: str | None = None
        self.visited: list[str] = []
        self.seen_rooms: list[str] = []
        self.inventory = ""

    def _read(self, observation: str) -> None:
        text = observation.lower()
        room = _ROOM.search(text)
        if room:
            self.location = room.group(1).strip()
            if self.location not in self.visited:
                self.visited.append(self.location)
        for name in _EXIT.findall(text):
            name = name.strip(" .")
            if name and name not in self.seen_rooms:
                self.seen_rooms.append(name)
        if text.startswith("inventory"):
            self.inventory = observation.strip()

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        super().reset(observation, info)
        self._read(observation)

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        super().executed(action, observation, info)
        self.actions = (self.actions + [action.strip().lower()])[-ACTIONS_WINDOW:]
        self.observations = (self.observations + [observation.lower()])[-OBSERVATIONS_WINDOW:]
        self._read(observation)

    def no_action(self, shown: str) -> None:
        """As in ALFWorld: a no-action nudge does not overwrite the observation hooks see."""

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        acting = hook in ("on_before_action", "on_post_step") and proposal is not None
        raw = proposal.raw if acting and proposal else ""
        final = (proposal.final or "") if acting and proposal else ""
        normalized = " ".join((final or raw).strip().lower().split())
        invalid = sum(any(m in o for m in INVALID_MARKERS) for o in self.observations)
        return alfworld_ctx(
            step=step,
            max_step=self.max_steps,
            remaining=self.remaining(hook, step),
            raw=raw,
            final=final,
            normalized=normalized,
            in_admissible=bool(normalized) and normalized in [a.lower() for a in self.admissible],
            observation=self.observation,
            admissible=self.admissible,
            actions=self.actions,
            observations=self.observations,
            task=self.task,
            nothing_happens=invalid,  # the games' invalid-action message plays ALFWorld's "nothing happens"
            invalid_actions=invalid,
            world={
                "current_location": self.location,
                "inventory": self.inventory,
                "visited": list(self.visited),
                "unvisited": [room for room in self.seen_rooms if room not in self.visited],
            },
        )
