"""The shop tiny-agent recipe: recipes, perturbations that never buy, and a premature ``buy now``."""

from __future__ import annotations

import random
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.models.tiny.spec import TinySpec

_SHARED: dict[str, Any] = dict(max_new_tokens=48, max_length=2048, interventions=True)
_BUY = "click[buy now]"


def perturb(env: TextEnvLike, rng: random.Random) -> str | None:
    action = str(env.random_action(rng))
    return None if action.lower() == _BUY else action


def premature(env: TextEnvLike, expert: str, rng: random.Random) -> str | None:
    """``buy now`` before the expert would buy (None when the expert buys now)."""
    if any(word in expert.lower() for word in (_BUY, "final answer")):
        return None
    return next((a for a in env.admissible_actions() or [] if a.lower() == _BUY), None)


TINY = TinySpec(
    recipes={"S": _SHARED | {"steps": 500}, "M": _SHARED | {"steps": 700}},
    perturb=perturb,
    premature=premature,
)
