"""What the JAR-backed text-game kits share (TextWorldExpress, ScienceWorld): the gold-path solver's
bookkeeping, the one command tool of the tool-calling protocol and Harness-R1's ALFWorld ``ctx``.

:class:`TextGameAdapter` computes for a text game the fields the official Harness-R1 exposes for ALFWorld:
the proposed ``action`` (raw, normalised, final, whether it is admissible), ``state`` counters, ``task``
fields, ``predicates``, the ``observation`` and ``admissible`` list, a short ``history`` and a ``world``
snapshot — all from what the agent observed: a command the game did not accept counts as ALFWorld's
``Nothing happens.``, the world snapshot holds the current location and inventory read from the game's own
text and the rooms visited or seen through exits, never hidden state. ``task`` carries the game (or task
family) as ``task_type``; text games have no target or destination types, so those fields are empty. Each
game's kit subclasses it with the patterns of its text (``kits/twx/r1.py``, ``kits/scienceworld/r1.py``).

:class:`GoldPathGame` expects the env to keep ``_history`` (the commands played), ``_gold`` (the gold path,
``None`` until asked for), ``_left_gold_at`` and a ``gold_path()`` method that computes the gold path once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.runtime.r1.adapter import Proposal, R1Adapter, alfworld_ctx

#: The one tool of the text games' tool-calling protocol (Harness-R1's ALFWorld name).
TOOL_NAME = "take_action"
#: Harness-R1 ctx: the last actions and observations a hook sees
ACTIONS_WINDOW = 6
OBSERVATIONS_WINDOW = 4


class GoldPathGame:
    """The scripted solver plays the gold path from the start and reports where an episode left it."""

    _history: list[str]
    _gold: list[str] | None
    _left_gold_at: int | None
    #: what the solver does once the gold path is played out
    after_gold = "look around"

    def gold_path(self) -> list[str]:  # pragma: no cover - the env defines it
        raise NotImplementedError

    def _on_gold(self) -> bool:
        assert self._gold is not None
        return self._history == self._gold[: len(self._history)]

    def _gold_report(self) -> dict[str, Any]:
        return {} if self._gold is None else {"gold_path_left_at": self._left_gold_at}

    @property
    def gold_path_left_at(self) -> int | None:
        """The step where the episode left the gold path (None: on it, or the gold path was never asked for).

        Not in ``runtime_state`` on purpose: hooks must not learn whether the agent is on the gold path."""
        return self._left_gold_at

    def expert_action(self) -> str:
        gold = self.gold_path()
        position = len(self._history)
        return gold[position] if position < len(gold) else self.after_gold

    def command_tool(self, description: str) -> list[dict[str, Any]]:
        """The tool-calling protocol's one tool: ``take_action(action)``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": TOOL_NAME,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": {"action": {"type": "string", "description": "the command text"}},
                        "required": ["action"],
                        "additionalProperties": False,
                    },
                },
            }
        ]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name != TOOL_NAME:
            game = getattr(self, "name", "this game")
            raise ValueError(f"{game} has one tool, {TOOL_NAME!r}; got a call to {name!r}")
        action = arguments.get("action") if isinstance(arguments, Mapping) else None
        if not isinstance(action, str) or not action.strip():
            raise ValueError(f"{TOOL_NAME} needs a non-empty string argument 'action', got {arguments!r}")
        return action

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return TOOL_NAME, {"action": action}


class TextGameAdapter(R1Adapter):
    """ALFWorld's ctx shape for a text game; a game's subclass says how its text names the room, the rooms
    seen beyond the exits, the inventory and a command it did not accept."""

    #: the current room's name in an observation (group 1)
    room_pattern: re.Pattern[str]
    #: rooms seen from here (group 1; ``findall``)
    exit_pattern: re.Pattern[str]
    #: how the game's answer to an inventory command begins (lower case)
    inventory_prefix = "inventory"
    #: what the game says to a command it does not accept (lower case; counted as ALFWorld's "nothing
    #: happens")
    invalid_markers: tuple[str, ...] = ()

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
        room = self.room_pattern.search(text)
        if room:
            self.location = room.group(1).strip()
            if self.location not in self.visited:
                self.visited.append(self.location)
        for name in self.exit_pattern.findall(text):
            name = name.strip(" .")
            if name and name not in self.seen_rooms:
                self.seen_rooms.append(name)
        if text.startswith(self.inventory_prefix):
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
        fields = self.action_fields(hook, step, proposal, lambda text: " ".join(text.strip().lower().split()))
        normalized = fields["normalized"]
        invalid = sum(any(m in o for m in self.invalid_markers) for o in self.observations)
        return alfworld_ctx(
            **fields,
            in_admissible=bool(normalized) and normalized in [a.lower() for a in self.admissible],
            observation=self.observation,
            admissible=self.admissible,
            actions=self.actions,
            observations=self.observations,
            task=self.task,
            nothing_happens=invalid,  # the games' invalid-action message plays ALFWorld's "nothing happens"
            invalid_actions=invalid,
            world=self.world(),
        )

    def world(self) -> dict[str, Any]:
        """The world snapshot: what the agent read of where it is, what it holds, the rooms it has seen."""
        return {
            "current_location": self.location,
            "inventory": self.inventory,
            "visited": list(self.visited),
            "unvisited": [room for room in self.seen_rooms if room not in self.visited],
        }
