"""Harness-R1's ALFWorld ``ctx`` for ``household`` (spec §2.2), from observations and executed actions.

The world snapshot follows the Life-Harness world model the spec describes: it is built from what the
agent's observations say ("You arrive at …", "You pick up the X from …", "You put …", "word N" tokens
seen while the location is known), not from the env's hidden state. Differences are listed in
docs/r1-interop.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.runtime.r1.adapter import Proposal, R1Adapter, alfworld_ctx

ACTIONS_WINDOW = 6
OBSERVATIONS_WINDOW = 4
TASK_TYPES = {
    "pick_and_place_simple": "pick_and_place",
    "look_at_obj_in_light": "look_at_obj",
    "pick_clean_then_place_in_recep": "pick_clean_then_place",
    "pick_heat_then_place_in_recep": "pick_heat_then_place",
    "pick_cool_then_place_in_recep": "pick_cool_then_place",
    "pick_two_obj_and_place": "pick_two_obj",
}
_TOKEN = re.compile(r"\b([a-z]+ \d+)\b")
_PICK = re.compile(r"you pick up the ([a-z]+ \d+) from")
_PUT = re.compile(r"you put the ([a-z]+ \d+) (?:in/on|in|on) the ([a-z]+ \d+)")


@dataclass
class WorldModel:
    """The official ``world`` snapshot, updated after every executed action."""

    target_type: str = ""
    current_location: str | None = None
    inventory: str | None = None
    object_at: dict[str, str] = field(default_factory=dict)
    visited: set[str] = field(default_factory=set)
    unvisited: list[str] = field(default_factory=list)
    target_found: bool = False
    target_location: str | None = None
    placed_count: int = 0
    placed_items: list[str] = field(default_factory=list)
    placed_locations: list[str] = field(default_factory=list)
    lamp_location: str | None = None

    def discover(self, admissible: list[str]) -> None:
        for command in admissible:
            if command.startswith("go to "):
                place = command[6:]
                if place not in self.visited and place not in self.unvisited:
                    self.unvisited.append(place)

    def seed(self, admissible: list[str]) -> None:
        self.discover(admissible)
        target = self.target_type
        if target and any(a.startswith(f"take {target} ") for a in admissible):
            self.target_found, self.target_location = True, "starting location"

    def update(self, action: str, observation: str, admissible: list[str]) -> None:
        act, obs = action.strip().lower(), observation.lower()
        if act.startswith("go to ") and "nothing happens" not in obs:
            self.current_location = act[6:]
            self.visited.add(self.current_location)
            if self.current_location in self.unvisited:
                self.unvisited.remove(self.current_location)
        self.discover(admissible)
        picked, put = _PICK.search(obs), _PUT.search(obs)
        if picked:
            self.inventory = picked.group(1)
        if put:
            self.placed_count += 1
            self.placed_items.append(self.inventory or put.group(1))
            self.placed_locations.append(put.group(2))
            self.inventory = None
            self.target_location = None  # a placement cycle completed: look for the next target
        if act.startswith("use ") and "turn on" in obs:
            self.lamp_location = self.current_location
        if self.current_location is None:
            return
        for token in _TOKEN.findall(obs):
            self.object_at.setdefault(token, self.current_location)
            kind = token.rsplit(" ", 1)[0]
            if kind == self.target_type and token not in self.placed_items and self.target_location is None:
                self.target_found, self.target_location = True, self.current_location

    def snapshot(self) -> dict[str, Any]:
        return {
            "current_location": self.current_location,
            "inventory": self.inventory,
            "object_at": dict(self.object_at),
            "visited": sorted(self.visited),
            "unvisited": list(self.unvisited),
            "target_found": self.target_found,
            "target_location": self.target_location,
            "placed_count": self.placed_count,
            "placed_items": list(self.placed_items),
            "placed_locations": list(self.placed_locations),
            "lamp_location": self.lamp_location,
        }


class HouseholdAdapter(R1Adapter):
    """ALFWorld's ctx: ``action``, ``state``, ``task``, ``predicates``, ``history``, ``world`` and extras."""

    benchmark = "alfworld"
    tool_hint_target = "take_action"
    shared_fields = frozenset({"observation", "admissible", "max_step"})
    forbid_numbered_instances = True

    def __init__(self, env: TextEnvLike, max_steps: int) -> None:
        super().__init__(env, max_steps)
        fields = env.task_fields()
        self.task = {
            "task_type": TASK_TYPES.get(str(fields.get("task_type")), "pick_and_place"),
            "target_type": str(fields.get("target_type") or ""),
            "destination_type": str(fields.get("destination_type") or fields.get("lamp_type") or ""),
        }
        self.world = WorldModel(target_type=self.task["target_type"])
        self.actions: list[str] = []
        self.observations: list[str] = []
        self.initial = ""

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        super().reset(observation, info)
        self.initial = observation.split("\n\n", 1)[1] if "\n\n" in observation else observation
        self.world.seed(self.admissible)

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        super().executed(action, observation, info)
        self.actions = (self.actions + [action.strip().lower()])[-ACTIONS_WINDOW:]
        self.observations = (self.observations + [observation.lower()])[-OBSERVATIONS_WINDOW:]
        self.world.update(action, observation, self.admissible)

    def no_action(self, shown: str) -> None:
        """ALFWorld's no-tool nudges do not overwrite the observation hooks see."""

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        fields = self.action_fields(hook, step, proposal, lambda text: text.strip().lower())
        normalized = fields["normalized"]
        return alfworld_ctx(
            **fields,
            in_admissible=bool(normalized) and normalized in self.admissible,
            observation=self.initial if hook == "on_init" else self.observation,
            admissible=self.admissible,
            actions=self.actions,
            observations=self.observations,
            task=self.task,
            nothing_happens=sum("nothing happens" in o for o in self.observations),
            invalid_actions=0,
            world=self.world.snapshot(),
        )
