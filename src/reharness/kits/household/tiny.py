"""The household tiny-agent recipe: recipes, perturbations (absent takes, near-miss instance numbers) and
thoughts (:mod:`.thoughts`)."""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

from reharness.kits.household.thoughts import household_thought
from reharness.models.tiny.spec import TinySpec

if TYPE_CHECKING:
    from reharness.kits.household.env import HouseholdEnv

_NUMBER = re.compile(r"\b\d+\b")
#: What the S and M agents share; M adds steps where the 30-minute budget allows (RECIPE.md).
_SHARED: dict[str, Any] = dict(max_new_tokens=48, perturb_prob=0.15, repeat_prob=0.7, interventions=True)


def perturb(env: HouseholdEnv, rng: random.Random) -> str:
    """A third each: an absent take (the goal's object type taken from where the agent stands although it is
    not there: trained tiny agents open a container and take the target without reading what is in it), a
    near miss (the expert's command with a wrong instance number: right receptacle type, wrong instance)
    and a random admissible command."""
    draw = rng.random()
    if draw < 1 / 3:
        absent = _absent_take(env, rng)
        if absent is not None:
            return absent
    expert = str(env.expert_action())
    numbers = _NUMBER.findall(expert)
    if numbers and draw < 2 / 3:
        target = rng.choice(numbers)
        wrong = str(max(1, int(target) + rng.choice((-2, -1, 1, 2, 3))))
        if wrong != target:
            return _NUMBER.sub(lambda m: wrong if m.group() == target else m.group(), expert, count=1)
    return str(env.random_action(rng))


def _absent_take(env: HouseholdEnv, rng: random.Random) -> str | None:
    """``take <goal object> N from <here>`` naming an object that is not where the agent stands."""
    world, goal = env.world, env.goal
    if world is None or goal is None or world.held is not None or world.location is None:
        return None
    name = f"{goal.target} {rng.randint(1, 3)}"
    return None if name in world.contents(world.location) else f"take {name} from {world.location}"


TINY = TinySpec(
    recipes={"S": _SHARED | {"steps": 800}, "M": _SHARED | {"steps": 1200}},
    perturb=perturb,
    thought=household_thought,
)
