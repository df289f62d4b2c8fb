"""The apps tiny-agent recipe. Replies are whole programs (the helper block ~150 tokens, a task's code up to
~350); episodes are short (two to four turns), so 2,048 tokens hold a whole demo."""

from __future__ import annotations

import random

from reharness.core.env_protocol import TextEnvLike
from reharness.models.tiny.spec import TinySpec


def perturb(env: TextEnvLike, rng: random.Random) -> str | None:
    action = str(env.random_action(rng))
    return None if "complete_task" in action else action


TINY = TinySpec(recipes={"S": {"max_new_tokens": 400, "max_length": 2048, "steps": 400}}, perturb=perturb)
