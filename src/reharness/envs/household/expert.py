"""State-based expert of the household environment.

:func:`expert_action` reads the true world state (privileged: it knows where every object is) and returns the
next command of a shortest plan: put away a wrong held object, go to a needed object, open its container,
take it, bring it to the appliance its state needs, then to the destination (or under a lamp), open, put.
Because it looks only at the current state, it recovers from any detour (random or invalid actions, objects
moved or states undone in between); every step it takes strictly advances the plan, so it never loops.
"""

from __future__ import annotations

from reharness.envs.household.catalog import STATE_APPLIANCE, is_openable, kind_of, natural_key
from reharness.envs.household.goals import Goal, satisfies
from reharness.envs.household.world import World


def expert_action(world: World, goal: Goal) -> str:
    """The next command of the expert plan from the current state."""
    if goal.lamp is not None:
        return _look_at(world, goal)
    return _place(world, goal)


def _look_at(world: World, goal: Goal) -> str:
    held = world.held
    if held is not None and satisfies(world, goal, held):
        lamps = [o for o in world.obj_loc if kind_of(o) == goal.lamp]
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
        return f"use {lamp}"
    if held is not None:
        return _put_down(world)
    return _fetch(world, goal, [o for o in world.obj_loc if kind_of(o) == goal.target])


def _place(world: World, goal: Goal) -> str:
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


def _fetch(world: World, goal: Goal, candidates: list[str]) -> str:
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
