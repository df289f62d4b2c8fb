"""The TextWorldExpress tiny-agent recipe (``EnvKit.tiny``): trained on gold paths, like the built-ins'.

The gold path only runs from the start (the JAR cannot plan from a later state), so every perturbation in the
demonstrations is one that changes nothing: the solver (:meth:`TwxEnv.expert_action`) then still plays the
next gold action, and the demo shows a real recovery. The perturbations are the mistakes an agent that
composes commands from the room text makes (the base harness does not list the valid actions):

- a command for later: a gold action that is not valid yet (a ``put`` before the container is open, a
  ``take`` of an object in another room);
- a near miss: the expert's command naming another object of the game (rejected when it happens to be valid,
  since a valid one would change the state);
- a look: ``look around`` or ``inventory`` (what looping agents repeat).

Demos are capped by the 1,000 seeds of TWX's train fold, so the recipe passes over them several times
(``epochs``).
"""

from __future__ import annotations

import random
from typing import Any

from reharness.kits.twx.env import READ_ONLY
from reharness.models.tiny.spec import TinySpec

_VERBS = ("take", "put", "open", "close", "move", "cook", "slice", "chop", "dice", "eat", "read", "drop")


def _objects(gold: list[str]) -> list[str]:
    """Object names the gold path mentions (``take X``, ``put X in Y``, ``open Y``), in order, unique."""
    names: list[str] = []
    for command in gold:
        verb, _, rest = command.partition(" ")
        if verb not in _VERBS or verb == "move":
            continue
        for part in rest.split(" in ") if verb == "put" else (rest,):
            part = part.strip()
            if part and part not in names:
                names.append(part)
    return names


def _later(gold: list[str], expert: str, valid: set[str], rng: random.Random) -> str | None:
    """A gold action from later in the path that is not valid yet."""
    ahead = [a for a in gold[gold.index(expert) + 1 :] if a not in valid] if expert in gold else []
    return rng.choice(ahead) if ahead else None


def _near_miss(gold: list[str], expert: str, valid: set[str], rng: random.Random) -> str | None:
    """The expert's command with one object name swapped for another object of the game (invalid only)."""
    objects = _objects(gold)
    names = [n for n in objects if n in expert]
    others = [n for n in objects if n not in expert]
    if not names or not others:
        return None
    wrong = expert.replace(rng.choice(names), rng.choice(others), 1)
    return None if wrong in valid else wrong


def perturb(env: Any, rng: random.Random) -> str | None:
    """A command that changes nothing: a later gold action, a near miss or a look (see the module)."""
    gold = list(env.gold_path())
    expert = str(env.expert_action())
    valid = set(env.admissible_actions() or ())
    draw = rng.random()
    if draw < 0.4:
        action = _later(gold, expert, valid, rng)
    elif draw < 0.75:
        action = _near_miss(gold, expert, valid, rng)
    else:
        action = rng.choice(READ_ONLY)
    if action is None or (action in valid and action not in READ_ONLY):
        return None
    return action


#: the S recipe of the default twc (all 1,000 train seeds, 1.6 passes, 4 episodes a step: a demo is ~1,800
#: tokens, three times a household one; see docs/real-benchmarks.md)
_S = {
    "steps": 400,
    "batch_size": 4,
    "epochs": 1.6,
    "perturb_prob": 0.15,
    "repeat_prob": 0.5,
    "interventions": True,
    "max_new_tokens": 32,
    "max_length": 2048,
}
TINY = TinySpec(recipes={"S": _S}, perturb=perturb)

#: ``twx-twc-easy`` (one room, two objects): demos of about 6 turns and 1,000 tokens fit in 1,536 tokens;
#: 600 steps of 8 episodes pass about five times over the 1,000 train seeds
TINY_EASY = TinySpec(
    recipes={"S": _S | {"steps": 600, "batch_size": 8, "epochs": 4.8, "max_length": 1536}}, perturb=perturb
)

#: ``twx-coin``: the explorer's gold paths are long (16.5 commands on average, each observation lists the
#: room's exits and doors): measured on 100 demos, median 3,102 tokens, 70% longer than 2,048 and 29% longer
#: than 4,096. At the default 2,048, 47% of the supervised tokens of 25 demos were cut, the episodes'
#: finishes included (the agent trained so played at the random agent's level); at 8,192, 17 of the 1,000
#: seed-0 demos are cut, losing 389 supervised tokens.
TINY_COIN = TinySpec(recipes={"S": _S | {"max_length": 8192}}, perturb=perturb)
