"""The goal planner of the household environment and the privileged expert built on it.

:func:`plan` reads a :class:`World` and returns the next command of a shortest plan: put away a wrong held
object, go to a needed object, open its container, take it, bring it to the appliance its state needs, then
to the destination (or under a lamp), open, put. When the world it is given holds no object it needs, it
returns :class:`Search` naming the object type instead of a command.

Given the *true* world, the planner never needs to search: :func:`privileged_expert_action` knows where every
object is and goes straight there (the shortest solution, but it makes moves no agent could justify from its
observations). Given the agent's *believed* world (only what it has seen), the same planner drives the
exploring expert of :mod:`.explore`. Because the planner looks only at the current state it recovers from any
detour (random or invalid actions, objects moved or states undone in between); every step it takes strictly
advances the plan, so it never loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from reharness.kits.household.catalog import STATE_APPLIANCE, is_openable, kind_of, natural_key
from reharness.kits.household.dynamics import execute
from reharness.kits.household.goals import Goal, goal_met, satisfies
from reharness.kits.household.world import World


@dataclass(frozen=True)
class Search:
    """The plan needs an object of type ``kind`` that the given world does not (yet) contain."""

    kind: str


def plan(world: World, goal: Goal) -> str | Search:
    """The next command of the plan in ``world``, or what must be searched for first."""
    if goal.lamp is not None:
        return _look_at(world, goal)
    return _place(world, goal)


def privileged_expert_action(world: World, goal: Goal) -> str:
    """The next command of the shortest plan, using the true location of every object."""
    step = plan(world, goal)
    if isinstance(step, Search):  # unreachable for worlds that passed check_solvable
        raise ValueError(f"household: the room has no {step.kind} the goal needs")
    return step


def privileged_plan_length(world: World, goal: Goal, cap: int) -> int:
    """Steps the privileged expert needs from the current state (``cap + 1`` if more than ``cap``)."""
    sim = world.copy()
    for steps in range(cap + 1):
        if goal_met(sim, goal):
            return steps
        execute(sim, privileged_expert_action(sim, goal))
    return cap + 1


def _look_at(world: World, goal: Goal) -> str | Search:
    held = world.held
    if held is not None and satisfies(world, goal, held):
        lamps = [o for o in world.obj_loc if kind_of(o) == goal.lamp]
        if not lamps:
            return Search(goal.lamp or "")
        lamp = min(
            lamps,
            key=lambda name: (
                world.obj_loc[name] != world.location,
                not world.lamp_on[name],
                natural_key(name),
            ),
        )
        spot = world.obj_loc[lamp]
        if world.location != spot:
            return f"go to {spot}"
        if not world.accessible(spot):
            return f"open {spot}"
        return f"use {lamp}"
    if held is not None:
        return _put_down(world)
    return _fetch(world, goal, [o for o in world.obj_loc if kind_of(o) == goal.target])


def _place(world: World, goal: Goal) -> str | Search:
    assert goal.destination is not None
    destinations = world.receptacles_of(goal.destination)

    def filled(receptacle: str) -> int:
        return sum(1 for o in world.contents(receptacle) if satisfies(world, goal, o))

    chosen = min(destinations, key=lambda r: (-filled(r), natural_key(r)))
    held = world.held
    if held is not None and kind_of(held) == goal.target:
        if goal.state is not None and goal.state not in world.states.get(held, set()):
            appliance_kind, verb = STATE_APPLIANCE[goal.state]
            appliances = world.receptacles_of(appliance_kind)
            appliance = world.location if world.location in appliances else appliances[0]
            if world.location != appliance:
                return f"go to {appliance}"
            return f"{verb} {held} with {appliance}"
        return _deliver(world, held, chosen)
    if held is not None:
        return _put_down(world)
    candidates = [
        o
        for o, loc in world.obj_loc.items()
        if kind_of(o) == goal.target and not (loc == chosen and satisfies(world, goal, o))
    ]
    return _fetch(world, goal, candidates)


def _deliver(world: World, obj: str, receptacle: str) -> str:
    if world.location != receptacle:
        return f"go to {receptacle}"
    if not world.accessible(receptacle):
        return f"open {receptacle}"
    return f"put {obj} in/on {receptacle}"


def _fetch(world: World, goal: Goal, candidates: list[str]) -> str | Search:
    if not candidates:
        return Search(goal.target)
    obj = min(
        candidates,
        key=lambda o: (not satisfies(world, goal, o), world.obj_loc[o] != world.location, natural_key(o)),
    )
    spot = world.obj_loc[obj]
    if world.location != spot:
        return f"go to {spot}"
    if not world.accessible(spot):
        return f"open {spot}"
    return f"take {obj} from {spot}"


def _put_down(world: World) -> str:
    """Free the hands: put the held object where the agent stands (or on the first surface)."""
    assert world.held is not None
    here = world.location
    if here is None:
        here = next(r for r in world.receptacles if not is_openable(r))
        return f"go to {here}"
    if not world.accessible(here):
        return f"open {here}"
    return f"put {world.held} in/on {here}"
