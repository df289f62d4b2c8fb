"""Failure detectors and runtime signals on real trajectories of the built-in envs (scripted agents)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from failure_helpers import Steered, answer, episode, find_task, harness, replies, sql

from reharness.core.errors import UnknownNameError
from reharness.core.types import ChatResponse, ToolCall
from reharness.failures import (
    ALL_CODES,
    FailureCode,
    detect,
    failure_codes,
    findings,
    parse_code,
    signals,
)
from reharness.runtime import CallableOverlay, RandomAgent, RunSpec, SolverAgent, run_batch

C = FailureCode


def evidence(record: Any) -> dict[str, tuple[int, ...]]:
    return {f.code.value: f.steps for f in findings(record)}


def test_codes_are_a_stable_contract() -> None:
    assert [c.value for c in ALL_CODES][:10] == [
        "invalid_action",
        "format_error",
        "tool_error",
        "repeated_action",
        "no_progress",
        "sql_error",
        "premature_answer",
        "wrong_answer",
        "step_limit",
        "hook_error",
    ]
    assert all(c.description for c in ALL_CODES) and str(C.NO_PROGRESS) == "no_progress"
    assert parse_code("sql_error") is C.SQL_ERROR
    with pytest.raises(UnknownNameError, match="sql_error"):
        parse_code("sql_eror")


@pytest.mark.parametrize("env", ["household", "shop", "db"])
def test_solver_successes_have_no_codes(env: str) -> None:
    for task in range(2):
        record = episode(env, SolverAgent(), task=task)
        assert record.success and detect(record) == [] and findings(record) == []


def test_batch_stores_codes_random_household_hits_step_limit(tmp_path: Path) -> None:
    spec = RunSpec(env="household", agent="random", n=3, seed=1)
    result = asyncio.run(
        run_batch(spec, RandomAgent(), harness("household", step_limit=12), tmp_path, annotate=failure_codes)
    )
    stored = [json.loads(line) for line in Path(result.out, "episodes.jsonl").read_text().splitlines()]
    for record, row in zip(result.episodes, stored, strict=True):
        assert not record.success and "step_limit" in record.failure_codes
        assert row["failure_codes"] == record.failure_codes == sorted(set(record.failure_codes))
        assert record.failure_codes == [c.value for c in detect(record)]
        assert signals(record)["step_limit_hit"] == 1 and signals(record)["actions"] == 12
    plain = asyncio.run(run_batch(spec, RandomAgent(), harness("household", step_limit=12), tmp_path / "b"))
    assert all(e.failure_codes == [] for e in plain.episodes)  # no annotator, nothing stored


def test_invalid_repeated_and_no_progress_household() -> None:
    record = episode("household", replies(then="Action: dance with the mop"), step_limit=8)
    assert detect(record) == [C.INVALID_ACTION, C.NO_PROGRESS, C.REPEATED_ACTION, C.STEP_LIMIT]
    found = evidence(record)
    assert found["invalid_action"] == tuple(range(8)) and found["repeated_action"] == tuple(range(8))
    assert found["no_progress"] == tuple(range(1, 8))  # the first "Nothing happens." was new
    assert found["step_limit"] == (7,)
    sig = signals(record)
    assert sig["nothing_happens"] == sig["invalid_actions"] == 8 and sig["repeated_actions"] == 7


def test_two_repeats_are_not_a_repeated_action_but_alternation_is_no_progress() -> None:
    twice = episode("household", replies("Action: look", "Action: look", "Action: inventory"), step_limit=3)
    assert "repeated_action" in twice.steps[1].flags  # the runtime flags the first repeat ...
    assert C.REPEATED_ACTION not in detect(twice)  # ... the code needs 3 in a row
    pair = ("Action: go to cabinet 1", "Action: go to drawer 1")
    alternating = episode("household", replies(*(pair * 4)), step_limit=8)
    assert detect(alternating) == [C.NO_PROGRESS, C.STEP_LIMIT]
    assert evidence(alternating)["no_progress"] == tuple(range(2, 8))
    assert signals(alternating)["repeated_observations"] == 6


def test_format_and_tool_errors_under_the_tools_protocol() -> None:
    agent = replies(
        ChatResponse(tool_calls=(ToolCall(name="fly", arguments={}, id="c0"),)),
        ChatResponse(text="I think I should look around."),
        ChatResponse(tool_calls=(ToolCall(name="take_action", arguments={}, id="c1"),)),
        then=ChatResponse(tool_calls=(ToolCall(name="take_action", arguments={"action": "look"}),)),
    )
    record = episode("household", agent, protocol="tools", step_limit=4)
    found = evidence(record)
    assert found["tool_error"] == (0, 2) and found["format_error"] == (1,)
    assert C.INVALID_ACTION not in detect(record)
    assert signals(record)["tool_errors"] == 2 and signals(record)["format_errors"] == 1


def test_db_sql_error_premature_and_wrong_answer() -> None:
    question = find_task("db", lambda t: t.task_type not in ("INSERT", "UPDATE", "DELETE"))
    record = episode("db", replies(sql("SELECT nope FROM nowhere_at_all"), answer('["zzqx"]')), task=question)
    assert detect(record) == [C.PREMATURE_ANSWER, C.SQL_ERROR, C.WRONG_ANSWER]
    assert evidence(record)["sql_error"] == (0,) and evidence(record)["premature_answer"] == (1,)
    sig = signals(record)
    assert (sig["sql_count"], sig["sql_errors"], sig["answer_given"], sig["empty_results"]) == (1, 1, 1, 0)


def test_db_answer_after_a_useful_query_is_only_wrong_and_bad_format_is_format_error() -> None:
    from reharness.envs.registry import make_env

    question = find_task("db", lambda t: t.task_type not in ("INSERT", "UPDATE", "DELETE"))
    table = make_env("db", split="test").get_task(question).state["table"]["name"]
    agent = replies("hello there", sql(f"SELECT * FROM `{table}` LIMIT 1"), answer('["zzqx"]'))
    record = episode("db", agent, task=question)
    assert detect(record) == [C.FORMAT_ERROR, C.WRONG_ANSWER]  # db's invalid action is a format error
    assert "invalid_action" in record.steps[0].flags and evidence(record)["format_error"] == (0,)


def test_db_mutation_committed_without_a_write_is_premature() -> None:
    insert = find_task("db", lambda t: t.task_type == "INSERT")
    record = episode("db", replies(answer('["done"]')), task=insert)
    assert detect(record) == [C.PREMATURE_ANSWER, C.WRONG_ANSWER]
    assert "INSERT" in findings(record)[0].detail


def test_shop_purchase_without_required_options_is_premature() -> None:
    def skip_options(env: Any, action: str) -> str:
        state = env.runtime_state()["state"]
        return "click[buy now]" if state["page_type"] == "item" and action != "click[buy now]" else action

    task = find_task("shop", lambda t: " with " in t.instruction and ": " in t.instruction)
    record = episode("shop", Steered(skip_options), task=task)
    assert record.termination == "terminated" and record.score < 1
    assert detect(record) == [C.PREMATURE_ANSWER, C.WRONG_ANSWER]
    assert "required" in findings(record)[0].detail
    sig = signals(record)
    assert (sig["buy_now"], sig["searches"], sig["products_viewed"]) == (1, 1, 1)
    solved = episode("shop", SolverAgent(), task=task)
    assert solved.success and signals(solved)["clicks"] > sig["clicks"]


def test_hook_and_policy_errors() -> None:
    def broken(ctx: Any, nb: dict[str, Any]) -> None:
        raise RuntimeError("hook bug")

    overlay = CallableOverlay({"before_decision": broken}, name="broken")
    record = episode("household", SolverAgent(), overlays=(overlay,), step_limit=2)
    assert detect(record) == [C.HOOK_ERROR, C.STEP_LIMIT]
    assert evidence(record)["hook_error"] == (0, 1) and signals(record)["hook_errors"] == 2
    failing = episode("household", replies(ChatResponse(error="HTTP 500")))
    assert failing.termination == "error" and detect(failing) == [C.POLICY_ERROR]
