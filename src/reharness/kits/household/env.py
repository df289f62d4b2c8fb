"""``reharness/Household-v0``: an ALFWorld-like text household with six task types and admissible commands.

The agent stands in a room of numbered receptacles, reads an ALFWorld instruction ("put a clean mug in
coffeemachine.") and acts with ALFWorld's older command grammar (``go to``, ``open``, ``take … from``,
``put … in/on``, ``heat/clean/cool … with``, ``use``, ``examine``, ``inventory``, ``look``). Commands outside
the admissible list answer "Nothing happens.". The episode succeeds (reward 1) as soon as the goal holds.
See :mod:`.generator` for the task distribution. The scripted solver :meth:`HouseholdEnv.expert_action` is the
*exploring* expert of :mod:`.explore` (it acts only on what the agent has observed, so its demonstrations are
learnable); :meth:`HouseholdEnv.privileged_expert_action` is the shortest-plan expert of :mod:`.expert`, which
knows where every object is.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

from reharness.core.errors import EnvError
from reharness.envs.base import Task, TextEnv, Transition
from reharness.kits.household.catalog import STATE_APPLIANCE, kind_of, natural_key
from reharness.kits.household.commands import admissible, normalise
from reharness.kits.household.dynamics import execute
from reharness.kits.household.expert import privileged_expert_action
from reharness.kits.household.explore import exploring_expert_action
from reharness.kits.household.generator import make_task
from reharness.kits.household.goals import Goal, check_solvable, goal_met, placed_count
from reharness.kits.household.world import World

TOOL_NAME = "take_action"
INVALID = "Nothing happens."
WELCOME = "-= Welcome to TextWorld, ALFRED! =-"

_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Run one household command, e.g. 'go to cabinet 1', 'open cabinet 1', "
            "'take mug 1 from cabinet 1', 'put mug 1 in/on coffeemachine 1', 'heat egg 1 with microwave 1', "
            "'use desklamp 1', 'inventory', 'look'. Prefer one of the currently admissible commands."
        ),
        "parameters": {
            "type": "object",
            "properties": {"action": {"type": "string", "description": "the command text"}},
            "required": ["action"],
            "additionalProperties": False,
        },
    },
}


class HouseholdEnv(TextEnv):
    """ALFWorld-like household environment (see module docstring)."""

    name: ClassVar[str] = "household"
    env_id: ClassVar[str] = "reharness/Household-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 50
    #: ALFWorld drops forced/rewritten actions naming object instances that are not admissible.
    restrict_forced_to_admissible: ClassVar[bool] = True

    def __init__(
        self, split: str = "train", max_steps: int | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        self.world: World | None = None
        self.goal: Goal | None = None

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        return self.draw_task(split, index, partial(make_task, split=split))

    def _load(self, task: Task) -> None:
        try:
            goal = Goal.from_json(task.state["goal"])
            world = World.from_state(task.state)
            check_solvable(world, goal)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self.world = self.goal = None
            raise EnvError(
                f"household: malformed task {task.task_id!r}: {exc}",
                hint="a household task state holds 'room', 'receptacles', 'objects' (object -> receptacle) "
                "and 'goal'; compare with HouseholdEnv().get_task(0).state",
            ) from exc
        self.goal, self.world = goal, world

    def _state(self) -> tuple[World, Goal]:
        if self.world is None or self.goal is None or self.task is None:
            raise RuntimeError("household: the environment has no episode; call reset() first")
        return self.world, self.goal

    # ------------------------------------------------------------------ dynamics
    def _initial_observation(self) -> str:
        world, _ = self._state()
        assert self.task is not None
        return f"{WELCOME}\n\n{world.room_overview()}\n\nYour task is to: {self.task.instruction}"

    def _transition(self, action: str) -> Transition:
        world, goal = self._state()
        command = normalise(action)
        if command not in admissible(world):
            return Transition(observation=INVALID, invalid=True)
        observation = execute(world, command)
        if goal_met(world, goal):
            return Transition(observation=observation, reward=1.0, done=True, success=True, score=1.0)
        return Transition(observation=observation)

    def admissible_actions(self) -> list[str] | None:
        world, _ = self._state()
        return admissible(world)

    def expert_action(self) -> str:
        """The exploring expert's next command: uses only observed information (and, when the step limit
        gets tight, falls back to the privileged action; see :mod:`.explore`)."""
        world, goal = self._state()
        return exploring_expert_action(world, goal, steps_left=self.max_steps - self.steps)

    def privileged_expert_action(self) -> str:
        """The next command of the shortest plan, using the hidden location of every object."""
        world, goal = self._state()
        return privileged_expert_action(world, goal)

    def random_action(self, rng: random.Random) -> str:
        world, _ = self._state()
        return rng.choice(admissible(world))

    # ------------------------------------------------------------------ tool-calling protocol
    def tools(self) -> list[dict[str, Any]]:
        return [_TOOL]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name != TOOL_NAME:
            raise ValueError(f"household has one tool, {TOOL_NAME!r}; got a call to {name!r}")
        action = arguments.get("action") if isinstance(arguments, Mapping) else None
        if not isinstance(action, str) or not action.strip():
            raise ValueError(f"{TOOL_NAME} needs a non-empty string argument 'action', got {arguments!r}")
        return action

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return TOOL_NAME, {"action": action}

    # ------------------------------------------------------------------ hook views
    def runtime_state(self) -> dict[str, Any]:
        """What the agent has observed so far (ALFWorld ``ctx`` world snapshot); never unseen locations.

        ``object_at`` maps every object the agent has seen to the receptacle it was last seen in
        (``"inventory"`` while held); no other actor moves objects, so these entries are never stale.
        """
        world, goal = self._state()
        seen = sorted(world.seen, key=natural_key)
        visited = sorted(world.visited, key=natural_key)
        return {
            "current_location": world.location,
            "inventory": [] if world.held is None else [world.held],
            "object_at": {obj: world.seen[obj] for obj in seen},
            "visited": visited,
            "unvisited": [r for r in world.receptacles if r not in world.visited],
            "receptacles": list(world.receptacles),
            "target_found": any(kind_of(obj) == goal.target for obj in seen),
            "placed_count": placed_count(world, goal),
            "placed_required": goal.count if goal.destination is not None else 0,
            "open_receptacles": [r for r in world.receptacles if world.is_open.get(r, False)],
            "lamps_on": sorted((lamp for lamp, on in world.lamp_on.items() if on), key=natural_key),
            "object_states": {
                obj: sorted(world.states[obj])
                for obj in sorted(world.states, key=natural_key)
                if world.states[obj]
            },
        }

    def task_fields(self) -> dict[str, Any]:
        _, goal = self._state()
        assert self.task is not None
        appliance = STATE_APPLIANCE[goal.state][0] if goal.state is not None else None
        return {
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "target_type": goal.target,
            "destination_type": goal.destination,
            "required_state": goal.state,
            "appliance_type": appliance,
            "lamp_type": goal.lamp,
            "required_count": goal.count,
        }
