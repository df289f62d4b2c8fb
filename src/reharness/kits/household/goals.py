"""Task goals of the household environment: the goal record, ALFWorld-style instructions and the goal test.

Goals are stated over object and receptacle *types*, as in ALFWorld's PDDL goals: any mug that is clean and
inside any coffeemachine satisfies "put a clean mug in coffeemachine."; "put two X in Y" needs two X inside
the same Y instance; "look at X under the desklamp." needs the agent to hold an X while a desklamp at its
current location is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reharness.kits.household.catalog import STATE_APPLIANCE, TASK_STATE, TASK_TYPES, can_take_state, kind_of
from reharness.kits.household.world import World

#: Two phrasings per task type, as in ALFWorld's templates ({t} target, {d} destination, {l} lamp).
TEMPLATES: dict[str, tuple[str, str]] = {
    "pick_and_place_simple": ("put a {t} in {d}.", "put some {t} on {d}."),
    "look_at_obj_in_light": ("look at {t} under the {l}.", "examine the {t} with the {l}."),
    "pick_clean_then_place_in_recep": ("put a clean {t} in {d}.", "clean some {t} and put it in {d}."),
    "pick_heat_then_place_in_recep": ("put a hot {t} in {d}.", "heat some {t} and put it in {d}."),
    "pick_cool_then_place_in_recep": ("put a cool {t} in {d}.", "cool some {t} and put it in {d}."),
    "pick_two_obj_and_place": ("put two {t} in {d}.", "find two {t} and put them in {d}."),
}


@dataclass(frozen=True)
class Goal:
    """What must hold at the end: ``count`` objects of type ``target`` (with ``state``) in a ``destination``,
    or (look-at tasks) an object of type ``target`` held under a lit ``lamp``."""

    task_type: str
    target: str
    destination: str | None = None
    state: str | None = None
    lamp: str | None = None
    count: int = 1

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise ValueError(
                f"unknown household task type {self.task_type!r}; known: {', '.join(TASK_TYPES)}"
            )
        if (self.lamp is None) == (self.destination is None):
            raise ValueError("a household goal names exactly one of destination (placing) or lamp (look-at)")

    def to_json(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "target": self.target,
            "destination": self.destination,
            "state": self.state,
            "lamp": self.lamp,
            "count": self.count,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Goal:
        task_type = str(data["task_type"])
        return cls(
            task_type=task_type,
            target=str(data["target"]),
            destination=data.get("destination"),
            state=data.get("state", TASK_STATE.get(task_type)),
            lamp=data.get("lamp"),
            count=int(data.get("count", 1)),
        )

    def instruction(self, variant: int) -> str:
        template = TEMPLATES[self.task_type][variant % 2]
        return template.format(t=self.target, d=self.destination or "", l=self.lamp or "")


def check_solvable(world: World, goal: Goal) -> None:
    """Raise ``ValueError`` naming what is missing when ``goal`` cannot be reached in ``world``."""
    unknown = sorted({loc for loc in world.obj_loc.values() if loc not in world.receptacles})
    if unknown:
        raise ValueError(f"objects are placed in receptacles that are not in the room: {', '.join(unknown)}")
    targets = [o for o in world.obj_loc if kind_of(o) == goal.target]
    if len(targets) < goal.count:
        raise ValueError(f"the goal needs {goal.count} {goal.target} but the room has {len(targets)}")
    if goal.destination is not None and not world.receptacles_of(goal.destination):
        raise ValueError(f"the goal's destination type {goal.destination!r} has no receptacle in the room")
    if goal.lamp is not None and not any(kind_of(o) == goal.lamp for o in world.obj_loc):
        raise ValueError(f"the goal's lamp type {goal.lamp!r} has no instance in the room")
    if goal.state is not None:
        appliance, _ = STATE_APPLIANCE[goal.state]
        if not world.receptacles_of(appliance):
            raise ValueError(f"a {goal.state} {goal.target} needs a {appliance}, and the room has none")
        if not all(can_take_state(o, goal.state) for o in targets):
            raise ValueError(f"a {goal.target} cannot become {goal.state}")


def satisfies(world: World, goal: Goal, obj: str) -> bool:
    """``obj`` is of the goal's target type and has the required state."""
    return kind_of(obj) == goal.target and (goal.state is None or goal.state in world.states.get(obj, set()))


def placed_count(world: World, goal: Goal) -> int:
    """The most goal-satisfying objects inside one destination instance (0 for look-at tasks)."""
    if goal.destination is None:
        return 0
    best = 0
    for receptacle in world.receptacles_of(goal.destination):
        best = max(best, sum(1 for o in world.contents(receptacle) if satisfies(world, goal, o)))
    return best


def lit_lamp_here(world: World, goal: Goal) -> str | None:
    """A lamp of the goal's lamp type that is on at the agent's location, if any."""
    if world.location is None or goal.lamp is None:
        return None
    for obj in world.contents(world.location):
        if kind_of(obj) == goal.lamp and world.lamp_on.get(obj, False):
            return obj
    return None


def goal_met(world: World, goal: Goal) -> bool:
    if goal.lamp is not None:
        held = world.held
        return held is not None and satisfies(world, goal, held) and lit_lamp_here(world, goal) is not None
    return placed_count(world, goal) >= goal.count
