"""The db tiny-agent recipe: recipes, perturbations that never answer, a premature answer, the table's columns
as hint distractors, SQL near misses (:mod:`.near_miss`) and observed notes (:mod:`.notes`)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from reharness.core.env_protocol import TextEnvLike
from reharness.kits.db.near_miss import near_miss_action, table_columns
from reharness.kits.db.notes import ObservedSqlNotes
from reharness.models.tiny.spec import TinySpec

if TYPE_CHECKING:
    from reharness.kits.db.env import DBEnv

_SHARED: dict[str, Any] = dict(max_new_tokens=128)


def perturb(env: TextEnvLike, rng: random.Random) -> str | None:
    action = str(env.random_action(rng))
    return None if "final answer" in action.lower() else action


def premature(env: TextEnvLike, expert: str, rng: random.Random) -> str | None:
    """An answer before the expert would answer (None when the expert answers now)."""
    if any(word in expert.lower() for word in ("click[buy now]", "final answer")):
        return None
    for _ in range(8):
        action = str(env.random_action(rng))
        if "final answer" in action.lower():
            return action
    return None


def choices(env: DBEnv) -> tuple[str, ...]:
    """The table's columns: what a hint may name besides the expert's statement."""
    return tuple(table_columns(env))


def progress(env: TextEnvLike) -> tuple[int, str]:
    """Statements run so far and the last one's error kind (``none`` when it succeeded)."""
    state = (env.runtime_state() or {}).get("state") or {}
    return int(state.get("sql_count") or 0), str(state.get("last_error_kind") or "none")


TINY = TinySpec(
    recipes={"S": _SHARED | {"steps": 600}, "M": _SHARED | {"steps": 800}},
    perturb=perturb,
    premature=premature,
    choices=choices,
    near_miss=near_miss_action,
    progress=progress,
    notes=ObservedSqlNotes(),
)
