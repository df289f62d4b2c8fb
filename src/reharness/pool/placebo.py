"""Placebo siblings: harness-config deltas that add a neutral sentence — no instruction, no information.

A greedy (or sampled) policy is a function of its context, so *any* change of the context moves some tasks
from failure to success and others back. A placebo sibling measures that floor: where a real sibling's
rescues do not stand out of the placebo's, they are perturbation, not repair. Two users:
``benchmarks/pool_placebo.py`` (placebo rescue counts next to an evolve's candidates) and the ``placebo``
arm of policy training (``train policy --rescue placebo``, ``experiment s --methods placebo``): an all-failed
group is re-sampled under a placebo sibling, so a gain there comes from swapping out failed groups, not from
harness content.
"""

from __future__ import annotations

from typing import Any

from reharness.pool.pool import Pool
from reharness.pool.sibling import Sibling
from reharness.runtime.harness import HarnessConfig

#: Neutral additions: a sentence that states nothing about the task, the actions or the environment.
PLACEBOS: tuple[tuple[str, str], ...] = (
    ("system_prompt", "\nThis is an ordinary episode."),
    ("system_prompt", "\nRead the observations as they come."),
    ("first_user_template", "Episode start.\n"),
    ("system_prompt", "\n"),
)
#: The direction name placebo siblings carry (no direction's cluster: they target no failure code).
PLACEBO_DIRECTION = "placebo"


def placebo_delta(field: str, text: str, h0: dict[str, Any]) -> dict[str, Any]:
    """The config delta adding ``text`` to ``h0[field]`` (prepended to the first user template, appended to
    the system prompt)."""
    value = h0[field]
    return {field: text + value if field == "first_user_template" else value + text}


def placebo_siblings(h0: HarnessConfig, n: int = len(PLACEBOS)) -> list[Sibling]:
    """The first ``n`` placebo siblings of ``h0``."""
    base = h0.model_dump()
    return [
        Sibling(
            name=f"placebo-{i}",
            direction=PLACEBO_DIRECTION,
            base=h0,
            delta=placebo_delta(field, text, base),
            description=f"placebo: {field} += {text!r}",
        )
        for i, (field, text) in enumerate(PLACEBOS[:n])
    ]


def placebo_pool(pool: Pool, n: int = len(PLACEBOS)) -> Pool:
    """A pool with ``pool``'s H0 and policy whose siblings are the placebos (not saved anywhere)."""
    return Pool(pool.env, pool.h0, placebo_siblings(pool.h0, n), pool.policy, pool.directions)
