"""Effects and feedback text of household commands.

:func:`execute` applies one *admissible, canonical* command to a :class:`World` and returns ALFWorld's
feedback sentence; validity is decided beforehand by the admissible list, so nothing here has to handle
impossible commands.
"""

from __future__ import annotations

from reharness.kits.household.catalog import STATE_APPLIANCE
from reharness.kits.household.world import INVENTORY, World

_VERB_STATE = {verb: state for state, (_, verb) in STATE_APPLIANCE.items()}


def execute(world: World, command: str) -> str:
    """Apply ``command`` (canonical and admissible) and return the observation."""
    if command == "look":
        if world.location is None:
            return world.room_overview()
        return f"You are facing the {world.location}. Next to it, you see nothing."
    if command == "inventory":
        if world.held is None:
            return "You are not carrying anything."
        return f"You are carrying: a {world.held}."
    verb, _, rest = command.partition(" ")
    if verb == "go":
        return _go(world, rest.removeprefix("to "))
    if verb == "open":
        world.is_open[rest] = True
        world.observe(rest)
        return f"You open the {rest}. {world.describe(rest)}"
    if verb == "close":
        world.is_open[rest] = False
        return f"You close the {rest}."
    if verb == "examine":
        if rest in world.obj_loc or rest == world.held:
            return world.describe_object(rest)
        world.observe(rest)
        return world.describe(rest)
    if verb == "take":
        obj, _, receptacle = rest.partition(" from ")
        del world.obj_loc[obj]
        world.held = obj
        world.seen[obj] = INVENTORY
        return f"You pick up the {obj} from the {receptacle}."
    if verb == "put":
        obj, _, receptacle = rest.partition(" in/on ")
        world.obj_loc[obj] = receptacle
        world.held = None
        world.seen[obj] = receptacle
        return f"You put the {obj} in/on the {receptacle}."
    if verb == "use":
        on = not world.lamp_on[rest]
        world.lamp_on[rest] = on
        return f"You turn {'on' if on else 'off'} the {rest}."
    if verb in _VERB_STATE:
        obj, _, appliance = rest.partition(" with ")
        state = _VERB_STATE[verb]
        states = world.states.setdefault(obj, set())
        if state == "hot":
            states.discard("cool")
        elif state == "cool":
            states.discard("hot")
        states.add(state)
        return f"You {verb} the {obj} using the {appliance}."
    raise ValueError(f"household: execute() got a command outside the grammar: {command!r}")


def _go(world: World, receptacle: str) -> str:
    world.location = receptacle
    world.visited.add(receptacle)
    world.observe(receptacle)
    return f"You arrive at {receptacle}. {world.describe(receptacle)}"
