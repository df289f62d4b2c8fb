"""Harness-config mutations along a direction: the non-code half of a sibling's repair.

A direction names the config fields it may change (``config_fields`` in ``directions.yaml``); this module
proposes, for each of those fields, a few concrete values derived from H0 (never a fixed per-environment
literal, so a user's harness gets mutations of its own text). Each mutation is a small delta on top of the
parent sibling's delta. ``protocol`` and ``step_limit`` are never mutated: a protocol switch changes what the
policy must emit (a policy trained in one protocol fails in another), and a longer step limit buys successes
that would not hold in H0 — exactly the non-transferable "rescue" Harness-S's audit warns about.
"""

from __future__ import annotations

from typing import Any

from reharness.pool.directions import Direction
from reharness.runtime.harness import HarnessConfig

#: Fields whose mutation is never proposed (see the module docstring).
NEVER_MUTATED = frozenset({"protocol", "step_limit", "sampling", "env_options"})
#: The history window that comes with turning the admissible listing on (see :func:`config_mutations`).
LISTING_WINDOW = 4
GOAL_LINE = "\n(Your task: {instruction})"


def _field_values(field: str, config: HarnessConfig) -> list[Any]:
    value = getattr(config, field)
    if field == "show_admissible":
        return [not value]
    if field == "history_window":
        return [w for w in (4, 8) if w != value]
    if field == "first_user_template" and "{instruction}" not in value:
        return [value + GOAL_LINE]
    if field == "format_error_message":
        extra = (
            " Copy one command exactly as it is written in the admissible actions."
            if config.show_admissible
            else " Write exactly one line that starts with 'Action:'."
        )
        return [value.rstrip() + extra] if extra.strip() not in value else []
    if field == "system_prompt":
        extra = "\nBefore you finish, check that every requirement of the task is met."
        return [value + extra] if extra.strip() not in value else []
    if field == "admissible_template" and "{actions}" in value and config.show_admissible:
        # (the template is only shown with show_admissible; otherwise the mutation would change nothing)
        return [value.replace("{actions}", "{actions} (copy one exactly)")] if "copy one" not in value else []
    return []


def config_mutations(direction: Direction, config: HarnessConfig) -> list[dict[str, Any]]:
    """Deltas along ``direction`` from ``config`` (the parent's resolved config), in field order: one field
    each, except that turning the admissible listing on under an unbounded history also bounds the history
    (``history_window`` :data:`LISTING_WINDOW`) — every observation then carries the whole listing, and with
    all turns kept the prompt grows by a listing per step (a tiny ALFWorld-like policy took minutes an
    episode).
    """
    out: list[dict[str, Any]] = []
    for field in direction.config_fields:
        if field in NEVER_MUTATED:
            continue
        for value in _field_values(field, config):
            delta = {field: value}
            if field == "show_admissible" and value and not config.history_window:
                delta["history_window"] = LISTING_WINDOW
            out.append(delta)
    return out
