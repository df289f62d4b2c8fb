"""Shared helpers of the r1 tests: the spec's ctx schema per benchmark, and episodes that record every ctx."""

# ruff: noqa: E501 - hook sources and spec tables are written out one per line

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from reharness.envs.registry import make_env
from reharness.patches.model import HARNESS_R1_SCHEMA, Patch
from reharness.patches.overlay import PatchOverlay
from reharness.runtime.agents import Agent, SolverAgent
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness, base_harness_config
from reharness.runtime.overlay import CallableOverlay
from reharness.runtime.view import thaw
from reharness.store.records import EpisodeRecord

HOOKS = ("on_init", "make_pre_hint", "on_before_action", "on_post_step")
BENCHMARKS = {"household": "alfworld", "shop": "webshop", "db": "dbbench"}
S, INT, B, F, L, D, N = str, int, bool, float, list, dict, type(None)
#: Every field of the spec (§2) with its types, per benchmark; present at every hook point.
SCHEMA: dict[str, dict[str, Any]] = {
    "shop": {
        "action": {"tool": S, "value": S, "value_normalized": S, "final_action": (S, N)},
        "state": {
            "page_type": S, "has_search_bar": B, "clickables": L, "buy_now_available": B,
            "back_to_search_count": INT, "duplicate_search_count": INT, "product_stall_turns": INT,
            "same_click_count": INT, "remaining_steps": INT, "current_price": (F, N), "price_max": (F, N),
        },
        "task": {"task_type": S, "required_color": (S, N), "required_size": (S, N), "required_material": (S, N)},
        "predicates": dict.fromkeys(
            ["required_options_unselected", "product_price_over_budget", "same_click_repeated", "duplicate_search_repeated", "search_loop_detected", "product_page_stalled", "buy_now_available", "search_not_available", "action_not_admissible"], B),
        "observation": S, "step": INT, "max_step": INT, "remaining_steps": INT,
        "webshop": {"search_queries": L, "asins_visited": L, "current_asin": (S, N), "selected_attributes": D,
                    "attribute_options": D},
    },
    "household": {
        "action": {"raw": S, "normalized": S, "final_action": S, "in_admissible": B},
        "state": {"nothing_happens_count": INT, "repeated_observation_count": INT, "repeated_action_count": INT,
                  "invalid_action_count": INT, "remaining_steps": INT},
        "task": {"task_type": S, "target_type": S, "destination_type": S},
        "predicates": dict.fromkeys(["action_not_admissible", "nothing_happens_repeated", "same_observation_repeated", "same_action_repeated", "remaining_steps_low"], B),
        "observation": S, "admissible": L, "output": S, "step": INT, "max_step": INT, "remaining_steps": INT,
        "history": {"last_actions": L, "last_observations": L},
        "world": {"current_location": (S, N), "inventory": (S, N), "object_at": D, "visited": L, "unvisited": L,
                  "target_found": B, "target_location": (S, N), "placed_count": INT, "placed_items": L,
                  "placed_locations": L, "lamp_location": (S, N)},
    },
    "db": {
        "action": {"tool": S, "query": S, "answers": L, "h2_action": N, "h2_blocked_reason": S,
                   "commit_gate_action": N, "commit_gate_reason": S},
        "state": {"sql_count": INT, "last_sql": S, "last_result": S, "last_error_kind": S, "last_error_text": S,
                  "last_result_was_error": B, "error_streak": INT, "empty_streak": INT, "text_only_streak": INT,
                  "loop_streak": INT, "mutation_attempted": B, "candidate_answer": (S, L, N),
                  "candidate_answer_shape": (S, N), "candidate_implausible": B, "remaining_rounds": INT},
        "task": {"task_type": (S, N), "answer_shape": (S, N), "target_table": (S, N), "description": S},
        "dbbench": {"sql_history": L, "sql_history_raw": L, "discovered_columns": D, "db_response": S, "round": INT},
        "predicates": dict.fromkeys(
            ["execute_sql", "commit_final_answer", "no_sql_yet", "commit_before_sql", "commit_empty_answer", "mutation_task", "mutation_not_attempted", "last_result_error", "last_result_empty", "unknown_column_error", "syntax_error", "repeated_sql", "candidate_answer_available", "remaining_rounds_low", "text_only_loop"], B),
    },
}  # fmt: skip


def schema_errors(ctx: dict[str, Any], schema: dict[str, Any], where: str = "ctx") -> list[str]:
    """Differences between ``ctx`` and the spec ``schema``: missing/extra keys and wrong types."""
    errors = [f"{where}: extra key {k!r}" for k in ctx if k not in schema]
    for key, kind in schema.items():
        if key not in ctx:
            errors.append(f"{where}: missing {key!r}")
        elif isinstance(kind, dict):
            if not isinstance(ctx[key], dict):
                errors.append(f"{where}.{key}: not a dict")
            else:
                errors.extend(schema_errors(ctx[key], kind, f"{where}.{key}"))
        elif not isinstance(ctx[key], kind) or (kind is INT and isinstance(ctx[key], bool)):
            errors.append(f"{where}.{key}: {type(ctx[key]).__name__} is not {kind}")
    return errors


def record_ctx(
    env_name: str, agent: Agent | None = None, task: int = 0, seed: int = 1
) -> tuple[list, EpisodeRecord]:
    """Run one episode with an r1 overlay that records ``(hook, ctx)`` of every call (trusted, in-process)."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def recorder(hook: str) -> Callable[[Any, dict[str, Any]], None]:
        return lambda ctx, nb: seen.append((hook, thaw(ctx)))

    overlay = CallableOverlay({h: recorder(h) for h in HOOKS}, name="recorder", dialect="r1")
    record = run_episode(env_name, [overlay], agent, task, seed)
    return seen, record


def run_episode(
    env_name: str,
    overlays: list[Any],
    agent: Agent | None = None,
    task: int = 0,
    seed: int = 1,
    **harness: Any,
) -> EpisodeRecord:
    env = make_env(env_name, split="test")
    config = base_harness_config(env_name)
    if harness:
        config = config.model_copy(update=harness)
    runner = EpisodeRunner(env, agent or SolverAgent(), Harness(config, overlays))
    try:
        return asyncio.run(runner.run(env.get_task(task), seed=seed))
    finally:
        for overlay in overlays:
            asyncio.run(overlay.close())


def r1_overlay(env_name: str, hooks: dict[str, str]) -> PatchOverlay:
    """A sandboxed overlay of an official-format patch (``hooks``: official hook name → code)."""
    doc = {
        "schema_version": HARNESS_R1_SCHEMA,
        "benchmark": BENCHMARKS[env_name],
        "description": "test patch",
        "actions": [{"type": "add_code_hook", "hook": h, "code": c} for h, c in hooks.items()],
    }
    return PatchOverlay(Patch.from_dict(doc))
