"""The mutable world state of one household episode and the ALFWorld-style text that describes it.

A :class:`World` is rebuilt from a task's JSON state at every reset and then changed only by the dynamics.
Besides the true state (where every object is, what is open, which lamps are on, what the agent holds) it
keeps the agent's *observations* (objects seen and where, receptacles visited, receptacles whose contents it
has seen), which is what hooks may see through ``runtime_state`` and all the exploring expert may use. All
collections that are ever iterated are sorted with :func:`natural_key`, so the text never depends on dict or
set ordering.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reharness.kits.household.catalog import is_lamp, is_openable, natural_key

INVENTORY = "inventory"


def a_list(names: Iterable[str]) -> str:
    """ALFWorld's enumeration: ``nothing``, ``a x 1``, ``a x 1, and a y 2``, ``a x 1, a y 2, and a z 3``."""
    items = [f"a {name}" for name in names]
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + ", and " + items[-1]


@dataclass
class World:
    """True state plus the agent's observation memory (see module docstring)."""

    room: str
    receptacles: list[str]
    obj_loc: dict[str, str]
    is_open: dict[str, bool] = field(default_factory=dict)
    held: str | None = None
    location: str | None = None
    states: dict[str, set[str]] = field(default_factory=dict)
    lamp_on: dict[str, bool] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)
    visited: set[str] = field(default_factory=set)
    #: Receptacles whose contents the agent has seen (a visited container it never opened is not searched).
    searched: set[str] = field(default_factory=set)

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> World:
        receptacles = sorted((str(r) for r in state["receptacles"]), key=natural_key)
        objects: Mapping[str, Any] = state["objects"]
        obj_loc = {str(o): str(objects[o]) for o in sorted(objects, key=natural_key)}
        world = cls(room=str(state["room"]), receptacles=receptacles, obj_loc=obj_loc)
        world.is_open = {r: False for r in receptacles if is_openable(r)}
        world.states = {o: set() for o in obj_loc}
        world.lamp_on = {o: False for o in obj_loc if is_lamp(o)}
        return world

    def copy(self) -> World:
        """An independent copy (for look-ahead simulation)."""
        return World(
            room=self.room,
            receptacles=list(self.receptacles),
            obj_loc=dict(self.obj_loc),
            is_open=dict(self.is_open),
            held=self.held,
            location=self.location,
            states={obj: set(states) for obj, states in self.states.items()},
            lamp_on=dict(self.lamp_on),
            seen=dict(self.seen),
            visited=set(self.visited),
            searched=set(self.searched),
        )

    # ------------------------------------------------------------------ queries
    def accessible(self, receptacle: str) -> bool:
        """Objects in ``receptacle`` can be seen, taken and put (surfaces always, containers when open)."""
        return self.is_open.get(receptacle, True)

    def contents(self, receptacle: str) -> list[str]:
        return [o for o, loc in self.obj_loc.items() if loc == receptacle]

    def visible(self) -> list[str]:
        """Objects the agent can see where it stands."""
        if self.location is None or not self.accessible(self.location):
            return []
        return self.contents(self.location)

    def all_objects(self) -> list[str]:
        names = list(self.obj_loc)
        if self.held is not None:
            names.append(self.held)
        return sorted(names, key=natural_key)

    def receptacles_of(self, kind: str) -> list[str]:
        return [r for r in self.receptacles if r.rsplit(" ", 1)[0] == kind]

    # ------------------------------------------------------------------ observation memory
    def observe(self, receptacle: str) -> None:
        """Record what the agent sees in ``receptacle`` (called whenever its contents are described)."""
        if self.accessible(receptacle):
            self.searched.add(receptacle)
            for obj in self.contents(receptacle):
                self.seen[obj] = receptacle

    # ------------------------------------------------------------------ text
    def describe(self, receptacle: str) -> str:
        """``The cabinet 1 is closed.`` / ``The cabinet 1 is open. In it, you see …`` / ``On the x 1, …``."""
        if is_openable(receptacle):
            if not self.is_open[receptacle]:
                return f"The {receptacle} is closed."
            return f"The {receptacle} is open. In it, you see {a_list(self.contents(receptacle))}."
        return f"On the {receptacle}, you see {a_list(self.contents(receptacle))}."

    def room_overview(self) -> str:
        return (
            "You are in the middle of a room. Looking quickly around you, you see "
            f"{a_list(self.receptacles)}."
        )

    def describe_object(self, obj: str) -> str:
        states = sorted(self.states.get(obj, set()))
        if not states:
            return f"There's nothing special about {obj}."
        return f"This is a {' and '.join(states)} {obj}."
