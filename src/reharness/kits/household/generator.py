"""Seeded task generator of the household environment.

One call draws a task type, a room that supports it, a target (and a destination or a lamp), lays out 10-25
numbered receptacles, hides 1-4 target instances (often inside closed containers, never already where the
goal wants them) and scatters distractor objects. It uses only the ``rng`` it is given and iterates only
over tuples and sorted lists, so a task is a pure function of its seed. The JSON state is compact because
the base class hashes every candidate while drawing a split.
"""

from __future__ import annotations

import random

from reharness.envs.base import Task
from reharness.kits.household.catalog import (
    LOOK_TARGETS,
    OBJECTS,
    OPENABLE,
    ROOM_NAMES,
    ROOMS,
    STATE_APPLIANCE,
    STORED_AWAY_BIAS,
    TASK_STATE,
    TASK_TYPES,
    RoomKind,
)
from reharness.kits.household.goals import Goal


def _rooms_for(task_type: str) -> list[str]:
    """Rooms that always contain what ``task_type`` needs (a lamp, or the appliance for the state)."""
    state = TASK_STATE[task_type]
    rooms = []
    for name in ROOM_NAMES:
        room = ROOMS[name]
        always = set(room.fixed) | {kind for kind, low, _ in room.ranges if low > 0}
        if task_type == "look_at_obj_in_light" and not room.lamps:
            continue
        if state is not None and STATE_APPLIANCE[state][0] not in always:
            continue
        rooms.append(name)
    return rooms


_ROOMS_FOR: dict[str, list[str]] = {t: _rooms_for(t) for t in TASK_TYPES}


def _layout(rng: random.Random, room: RoomKind) -> tuple[list[str], dict[str, list[str]]]:
    """Receptacle instances of a room, and the instances of each receptacle type."""
    by_kind: dict[str, list[str]] = {kind: [f"{kind} 1"] for kind in room.fixed}
    for kind, low, high in room.ranges:
        count = rng.randint(low, high)
        if count:
            by_kind[kind] = [f"{kind} {i}" for i in range(1, count + 1)]
    names = [name for kind in sorted(by_kind) for name in by_kind[kind]]
    return names, by_kind


def _homes(kind: str, by_kind: dict[str, list[str]]) -> list[str]:
    return [h for h in OBJECTS[kind].homes if h in by_kind]


def _spot(rng: random.Random, kinds: list[str], by_kind: dict[str, list[str]], closed_bias: float) -> str:
    """A receptacle instance of one of ``kinds``; with probability ``closed_bias`` a closed container."""
    if closed_bias > 0.0 and rng.random() < closed_bias:
        closed = [r for kind in kinds if kind in OPENABLE for r in by_kind[kind]]
        if closed:
            return rng.choice(closed)
    return rng.choice([r for kind in kinds for r in by_kind[kind]])


def _eligible_targets(task_type: str, room: RoomKind, homes: dict[str, list[str]]) -> list[str]:
    state = TASK_STATE[task_type]
    if task_type == "look_at_obj_in_light":
        return [kind for kind in room.objects if kind in LOOK_TARGETS and homes[kind]]
    return [
        kind
        for kind in room.objects
        if len(homes[kind]) >= 2 and (state is None or state in OBJECTS[kind].props)
    ]


def make_task(rng: random.Random, task_id: str, split: str) -> Task:
    """Draw one household task with ``rng`` (see module docstring)."""
    task_type = rng.choice(TASK_TYPES)
    room_name = rng.choice(_ROOMS_FOR[task_type])
    room = ROOMS[room_name]
    receptacles, by_kind = _layout(rng, room)
    homes_of = {kind: _homes(kind, by_kind) for kind in room.objects + room.lamps}
    target = rng.choice(_eligible_targets(task_type, room, homes_of))
    homes = homes_of[target]
    placed: list[tuple[str, str]] = []  # (object type, receptacle) in placement order

    if task_type == "look_at_obj_in_light":
        lamp = rng.choice(room.lamps)
        lamp_spot = _spot(rng, homes_of[lamp], by_kind, 0.0)
        placed.append((lamp, lamp_spot))
        for other in room.lamps:
            if other != lamp and rng.random() < 0.5:
                placed.append((other, _spot(rng, homes_of[other], by_kind, 0.0)))
        goal = Goal(task_type, target, lamp=lamp)
        start_kinds = homes
        avoid = {lamp_spot}
    else:
        destination = rng.choice(homes)
        count = 2 if task_type == "pick_two_obj_and_place" else 1
        goal = Goal(task_type, target, destination=destination, state=TASK_STATE[task_type], count=count)
        start_kinds = [h for h in homes if h != destination]
        avoid = set()

    n_targets = rng.randint(2, 4) if goal.count == 2 else rng.randint(1, 3)
    for _ in range(n_targets):
        spot = _spot(rng, start_kinds, by_kind, STORED_AWAY_BIAS)
        if spot in avoid:
            spot = _spot(rng, start_kinds, by_kind, STORED_AWAY_BIAS)
        placed.append((target, spot))

    others = [k for k in room.objects if k != target and homes_of[k]]
    for kind in rng.sample(others, min(len(others), rng.randint(6, 11))):
        for _ in range(rng.randint(1, 2)):
            placed.append((kind, _spot(rng, homes_of[kind], by_kind, 0.3)))

    objects = _number(rng, placed)
    state = {"room": room_name, "receptacles": receptacles, "objects": objects, "goal": goal.to_json()}
    instruction = goal.instruction(rng.randrange(2))
    return Task(task_id=task_id, split=split, instruction=instruction, task_type=task_type, state=state)


def _number(rng: random.Random, placed: list[tuple[str, str]]) -> dict[str, str]:
    """Give each object instance a number; numbers of one type are shuffled so they do not reveal order."""
    spots_by_kind: dict[str, list[str]] = {}
    for kind, spot in placed:
        spots_by_kind.setdefault(kind, []).append(spot)
    objects: dict[str, str] = {}
    for kind in sorted(spots_by_kind):
        spots = spots_by_kind[kind]
        numbers = list(range(1, len(spots) + 1))
        if len(numbers) > 1:
            rng.shuffle(numbers)
        for number, spot in zip(numbers, spots, strict=True):
            objects[f"{kind} {number}"] = spot
    return objects
