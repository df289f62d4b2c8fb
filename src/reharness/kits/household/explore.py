"""The exploring expert of the household environment: it acts only on what the agent has observed.

Demonstrations for training small language models must be learnable from the observations alone, so this
expert never uses the hidden location of an object. It plans with :func:`.expert.plan` on the agent's
*believed* world (:func:`believed_world`: the receptacle list, objects it has seen and where, what it
holds, which containers are open, the states and lamps it changed itself, the receptacles it has searched).
When the plan needs an object type it has not seen yet, :func:`search_step` goes to the unsearched receptacle
(one whose contents the agent has not seen: never visited, or visited while closed) where such an object most
likely starts according to generic prior knowledge (:func:`start_weights`: the object type's usual homes in
:mod:`.catalog`, and that things are usually stored away in closed containers), breaking ties by the agent's
current location, then by receptacle name and number, and opens it if closed.
Once the object is seen the plan takes it and proceeds like the privileged expert (appliance, lamp,
destination, a second instance for ``pick_two``).

Step-limit fallback: when the number of steps left (``steps_left``) gets within :data:`FALLBACK_MARGIN` of
what the privileged expert still needs, the expert switches to the privileged action so that the episode still
fits the step limit. With the default limit of 50 this never triggers on the first 1500 tasks of any split
(the exploring expert needs at most 28 steps there); it exists for rare rooms, tight custom limits and
episodes perturbed by random actions. Like the privileged expert, it is a pure function of the current state
(and ``steps_left``), so it recovers from any detour.
"""

from __future__ import annotations

from reharness.kits.household.catalog import OBJECTS, STORED_AWAY_BIAS, is_openable, kind_of, natural_key
from reharness.kits.household.expert import Search, plan, privileged_expert_action, privileged_plan_length
from reharness.kits.household.goals import Goal
from reharness.kits.household.world import INVENTORY, World

#: Fall back to the privileged action once ``steps_left <= privileged steps still needed + FALLBACK_MARGIN``.
FALLBACK_MARGIN = 2
#: The privileged look-ahead (a short simulation) only runs when at most this many steps are left.
LOOKAHEAD_STEPS = 30


def exploring_expert_action(world: World, goal: Goal, steps_left: int | None = None) -> str:
    """The next command of the exploring expert (see module docstring); ``None`` steps left: no fallback."""
    if steps_left is not None and steps_left <= LOOKAHEAD_STEPS:
        needed = privileged_plan_length(world, goal, cap=steps_left)
        if needed + FALLBACK_MARGIN >= steps_left:
            return privileged_expert_action(world, goal)
    step = plan(believed_world(world), goal)
    if isinstance(step, Search):
        action = search_step(world, goal, step.kind)
        return action if action is not None else privileged_expert_action(world, goal)
    return step


def believed_world(world: World) -> World:
    """The world as the agent knows it: only objects it has seen, where it last saw them.

    Nothing else moves objects, and only the agent's own commands open containers, change object states or
    switch lamps, so these parts of the true state are known to the agent and are copied as they are.
    """
    known = {obj: loc for obj, loc in world.seen.items() if loc != INVENTORY and obj != world.held}
    obj_loc = {obj: known[obj] for obj in sorted(known, key=natural_key)}
    mine = set(obj_loc) | ({world.held} if world.held is not None else set())
    return World(
        room=world.room,
        receptacles=list(world.receptacles),
        obj_loc=obj_loc,
        is_open=dict(world.is_open),
        held=world.held,
        location=world.location,
        states={obj: set(states) for obj, states in world.states.items() if obj in mine},
        lamp_on={obj: on for obj, on in world.lamp_on.items() if obj in mine},
        seen=dict(world.seen),
        visited=set(world.visited),
        searched=set(world.searched),
    )


def start_weights(kind: str, receptacles: list[str], avoid: str | None = None) -> dict[str, float]:
    """Prior probability that an object of type ``kind`` starts in each receptacle instance of the room.

    Objects start in one of their type's homes (:data:`.catalog.OBJECTS`), never in the receptacle type
    ``avoid`` (a placement goal never holds at the start); with probability :data:`STORED_AWAY_BIAS` in one
    of the closed containers among those homes, otherwise in any home instance. Other receptacles get 0.
    """
    info = OBJECTS.get(kind)
    if info is None:
        return {}
    present = {kind_of(r) for r in receptacles}
    homes = [h for h in info.homes if h in present]
    if avoid is not None and len(homes) > 1:
        homes = [h for h in homes if h != avoid]
    spots = [r for r in receptacles if kind_of(r) in homes]
    closed = [r for r in spots if is_openable(r)]
    if not spots:
        return {}
    if not closed:
        return {r: 1.0 / len(spots) for r in spots}
    spread = (1.0 - STORED_AWAY_BIAS) / len(spots)
    return {r: spread + (STORED_AWAY_BIAS / len(closed) if is_openable(r) else 0.0) for r in spots}


def search_step(world: World, goal: Goal, kind: str) -> str | None:
    """Go to (and open) the most likely unsearched receptacle for ``kind``; ``None`` if all are searched."""
    unsearched = [r for r in world.receptacles if r not in world.searched]
    if not unsearched:
        return None
    avoid = goal.destination if kind == goal.target else None
    weights = start_weights(kind, world.receptacles, avoid)
    best = min(unsearched, key=lambda r: (-weights.get(r, 0.0), r != world.location, natural_key(r)))
    if world.location != best:
        return f"go to {best}"
    if not world.accessible(best):
        return f"open {best}"
    return f"examine {best}"
