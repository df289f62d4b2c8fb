"""The official ``ctx`` (spec §2): every field, at every hook point, on every benchmark, with the spec's values."""

# ruff: noqa: E501 - hook sources and spec tables are written out one per line

from __future__ import annotations

import re
from typing import Any

import pytest
from r1_helpers import HOOKS, SCHEMA, r1_overlay, record_ctx, run_episode, schema_errors

from reharness.core.types import ChatRequest
from reharness.runtime.agents import FunctionAgent


def by_hook(seen: list[tuple[str, dict[str, Any]]], hook: str) -> list[dict[str, Any]]:
    return [ctx for h, ctx in seen if h == hook]


@pytest.mark.parametrize("env_name", ["household", "shop", "db"])
def test_every_field_of_the_spec_at_every_hook_point(env_name: str) -> None:
    seen, record = record_ctx(env_name)
    assert record.success and {h for h, _ in seen} == set(HOOKS)
    for hook, ctx in seen:
        assert schema_errors(ctx, SCHEMA[env_name]) == [], hook


def test_household_values() -> None:
    seen, record = record_ctx("household")
    init, pre, before, post = (by_hook(seen, h) for h in HOOKS)
    executed = [s.action for s in record.steps]
    assert init[0]["predicates"]["action_not_admissible"] is True
    assert all(c["predicates"]["action_not_admissible"] for c in pre)  # no action before the decision
    assert (
        not init[0]["observation"].startswith("-= Welcome") and "Your task is to:" in init[0]["observation"]
    )
    assert init[0]["history"] == {"last_actions": [], "last_observations": []}
    assert (
        init[0]["state"]["repeated_observation_count"] == 0 and init[0]["world"]["current_location"] is None
    )
    assert init[0]["task"]["task_type"] in {
        "pick_and_place", "pick_clean_then_place", "pick_heat_then_place", "pick_cool_then_place",
        "look_at_obj", "pick_two_obj",
    }  # fmt: skip
    for i, (b, p) in enumerate(zip(before, post, strict=True)):
        assert b["action"]["raw"] == b["action"]["final_action"] == executed[i] == b["output"]
        assert b["action"]["in_admissible"] and not b["predicates"]["action_not_admissible"]
        assert b["step"] == p["step"] == i and b["state"]["remaining_steps"] == b["max_step"] - i
        assert p["state"]["remaining_steps"] == p["remaining_steps"] == p["max_step"] - i - 1
        assert p["history"]["last_actions"][-1] == executed[i].lower()  # includes this step
        assert b["history"]["last_actions"][-1:] != [executed[i]] or executed[i] in executed[:i]
        assert p["state"]["repeated_action_count"] >= 1 and p["state"]["repeated_observation_count"] >= 1
        if executed[i].startswith("go to "):
            assert p["world"]["current_location"] == executed[i][6:]
            assert executed[i][6:] in p["world"]["visited"] and executed[i][6:] not in p["world"]["unvisited"]
    assert post[-1]["world"]["placed_count"] >= 1 and post[-1]["world"]["inventory"] is None
    assert all(
        c["action"] == {"raw": "", "normalized": "", "final_action": "", "in_admissible": False} for c in pre
    )


def test_shop_values() -> None:
    seen, record = record_ctx("shop")
    init, pre, before, post = (by_hook(seen, h) for h in HOOKS)
    assert init[0]["state"]["page_type"] == "unknown" and init[0]["state"]["clickables"] == []
    assert (
        init[0]["state"]["has_search_bar"] is False and init[0]["predicates"]["search_not_available"] is True
    )
    assert pre[0]["state"]["page_type"] == "unknown" and pre[0]["state"]["has_search_bar"] is True  # step 0
    assert before[0]["action"]["tool"] == "search_action" and before[0]["action"]["final_action"].startswith(
        "search["
    )
    assert post[0]["state"]["page_type"] == "search_results" and post[0]["action"]["tool"] == ""
    assert post[0]["webshop"]["search_queries"] == [before[0]["action"]["value"]]
    assert post[1]["state"]["page_type"] == "product_detail" and post[1]["state"]["product_stall_turns"] == 1
    asin = before[1]["action"]["value"].upper()
    assert post[1]["webshop"]["asins_visited"] == [asin] == [post[1]["webshop"]["current_asin"]]
    assert post[1]["state"]["buy_now_available"] and "buy now" in post[1]["state"]["clickables"]
    assert post[1]["state"]["current_price"] is not None and post[1]["state"]["price_max"] is not None
    assert post[1]["webshop"]["attribute_options"]
    buy = [c for c in before if c["action"]["value_normalized"] == "buy now"][0]
    assert buy["webshop"]["selected_attributes"] and buy["predicates"]["required_options_unselected"] is False
    assert all(
        c["predicates"]["action_not_admissible"] is False and c["state"]["same_click_count"] == 0
        for _, c in seen
    )
    assert [c["step"] for c in before] == list(range(len(before)))
    assert record.success


def test_shop_required_options_unselected_at_buy_now() -> None:
    """Buying on a product page before selecting any option: the official buy-now pre-check is True."""

    def buyer(request: ChatRequest) -> str:
        shown = str(request.messages[-1].content)
        if "Total results" in shown:
            return "Action: click[" + re.findall(r"\b(b0[a-z0-9]{8})\b", shown)[0] + "]"
        if "Buy Now" in shown:
            return "Action: click[buy now]"
        return "Action: search[tv stand]"

    ctxs, _ = record_ctx("shop", FunctionAgent(buyer))
    buy = [c for h, c in ctxs if h == "on_before_action" and c["action"]["value_normalized"] == "buy now"][0]
    assert buy["state"]["page_type"] == "product_detail" and buy["webshop"]["attribute_options"]
    assert buy["webshop"]["selected_attributes"] == {}
    assert buy["predicates"]["required_options_unselected"] is True
    others = [c for h, c in ctxs if c is not buy]
    assert not any(c["predicates"]["required_options_unselected"] for c in others)  # only for "buy now"


def test_db_values_and_missing_observation() -> None:
    seen, record = record_ctx("db")
    init, pre, before, post = (by_hook(seen, h) for h in HOOKS)
    assert all("observation" not in c and "step" not in c and "admissible" not in c for _, c in seen)
    assert init[0]["dbbench"]["round"] == 0 and init[0]["state"]["remaining_rounds"] == 20
    assert init[0]["state"]["last_error_kind"] == "" and init[0]["predicates"]["no_sql_yet"]
    assert pre[0]["dbbench"]["round"] == 1 and pre[0]["action"]["tool"] == ""
    sql = before[0]
    assert (
        sql["action"]["tool"] == "execute_sql" and sql["predicates"]["execute_sql"] and sql["action"]["query"]
    )
    assert sql["state"]["sql_count"] == 0  # still the previous state at on_before_action
    assert (
        post[0]["state"]["sql_count"] == 1
        and post[0]["dbbench"]["db_response"] == post[0]["state"]["last_result"]
    )
    assert post[0]["state"]["remaining_rounds"] == sql["state"]["remaining_rounds"] - 1
    assert post[0]["dbbench"]["sql_history"] == [" ".join(sql["action"]["query"].rstrip(";").split()).lower()]
    assert post[0]["state"]["last_error_kind"] == "ok" and post[0]["predicates"]["candidate_answer_available"]
    commit = before[-1]
    assert commit["action"]["tool"] == "commit_final_answer" and commit["action"]["answers"]
    assert len(post) == 1  # no on_post_step after a commit
    assert all(
        c["action"]["commit_gate_action"] is None and c["action"]["h2_action"] is None for _, c in seen
    )
    assert record.success


def test_db_ctx_observation_raises_and_get_is_none_in_the_sandbox() -> None:
    code = """
def hook(ctx, nb):
    nb["get"] = ctx.get("observation")
    try:
        ctx.observation
        nb["attr"] = "present"
    except Exception as exc:
        nb["attr"] = "missing"
    if nb["get"] is None and nb["attr"] == "missing":
        return {"message": "db-ok " + ctx.state.last_error_kind + "|" + str(ctx.dbbench.round)}
    return None
"""
    record = run_episode("db", [r1_overlay("db", {"make_pre_hint": code})])
    messages = [e["text"] for s in record.steps for e in s.effects if e["kind"] == "message"]
    assert messages[:2] == ["db-ok |1", "db-ok ok|2"]
    assert not any(s.hook_errors for s in record.steps)


@pytest.mark.parametrize("env_name", ["household", "shop", "db"])
def test_official_style_hook_reads_every_field_by_attribute(env_name: str) -> None:
    """A hook that reads every spec field with attribute access never fails on a missing field."""
    reads = []
    for group, fields in SCHEMA[env_name].items():
        if isinstance(fields, dict):
            reads += [f"ctx.{group}.{name}" for name in fields]
        else:
            reads.append(f"ctx.{group}")
    lines = "\n".join(f"    values.append({r})" for r in reads)
    code = f"def hook(ctx, nb):\n    values = []\n{lines}\n    return {{'message': 'read ' + str(len(values))}}\n"
    overlay = r1_overlay(env_name, dict.fromkeys(HOOKS, code))
    record = run_episode(env_name, [overlay])
    assert record.success
    assert [e for s in record.steps for e in s.hook_errors] == []
    messages = [e["text"] for s in record.steps for e in s.effects if e["kind"] == "message"]
    assert messages == [f"read {len(reads)}"] * record.num_steps  # make_pre_hint ran every round


def test_db_error_kinds_streaks_and_schema_discovery() -> None:
    def sql(text: str) -> str:
        return f"Action: Operation\n```sql\n{text}\n```"

    script: list[str] = []

    def agent(request: ChatRequest) -> str:
        if not script:
            table = re.search(r"The name of this table is (.+?), and the headers", prompt(request)).group(1)  # type: ignore[union-attr]
            script.extend([
                "I think.", "Still thinking.", sql(f"SELECT no_such_col FROM `{table}`"),
                sql("SELECT * FROM no_such_table"), sql("SELEC 1"), sql(f"SELECT * FROM `{table}` WHERE 1 = 0"),
                sql(f"SELECT MAX(1) FROM `{table}` WHERE 1 = 0"), sql(f"DESCRIBE `{table}`"), sql(f"describe `{table}`;"),
                "Final Answer: [\"x\"]",
            ])  # fmt: skip
        return script.pop(0) if len(script) > 1 else script[0]

    def prompt(request: ChatRequest) -> str:
        return "\n".join(str(m.content) for m in request.messages)

    seen, _ = record_ctx("db", FunctionAgent(agent))
    post = by_hook(seen, "on_post_step")
    pre = by_hook(seen, "make_pre_hint")
    assert pre[2]["state"]["text_only_streak"] == 2 and pre[2]["predicates"]["text_only_loop"]
    kinds = [c["state"]["last_error_kind"] for c in post]
    assert kinds == ["unknown_col", "unknown_table", "syntax", "empty", "null_agg", "ok", "ok"]
    assert [c["state"]["error_streak"] for c in post[:4]] == [1, 2, 3, 0]
    assert post[0]["predicates"]["unknown_column_error"] and post[2]["predicates"]["syntax_error"]
    assert post[0]["state"]["text_only_streak"] == 0 and post[0]["state"]["last_error_text"]
    assert post[3]["predicates"]["last_result_empty"] and post[3]["state"]["empty_streak"] == 1
    assert post[4]["state"]["candidate_answer"] == "0" and post[4]["state"]["empty_streak"] == 0
    table = post[5]["task"]["target_table"]
    assert post[5]["dbbench"]["discovered_columns"][table]  # DESCRIBE output parsed
    assert (
        post[6]["state"]["loop_streak"] == 1 and post[6]["predicates"]["repeated_sql"]
    )  # same normalised SQL
    assert post[5]["state"]["candidate_answer"] == "0"  # schema statements do not replace the candidate


def test_household_repetition_counters() -> None:
    replies = iter(
        ["Action: jump", "Action: jump", "Action: jump", "Action: look"] + ["Action: inventory"] * 50
    )
    seen, _ = record_ctx("household", FunctionAgent(lambda request: next(replies)))
    post = by_hook(seen, "on_post_step")
    before = by_hook(seen, "on_before_action")
    assert [c["state"]["nothing_happens_count"] for c in post[:4]] == [1, 2, 3, 3]
    assert (
        post[1]["predicates"]["nothing_happens_repeated"]
        and not post[0]["predicates"]["nothing_happens_repeated"]
    )
    assert [c["state"]["repeated_action_count"] for c in post[:3]] == [1, 2, 3]
    assert [c["state"]["repeated_action_count"] for c in before[:3]] == [
        0,
        1,
        2,
    ]  # the proposal is not counted
    assert (
        post[2]["state"]["repeated_observation_count"] == 3
        and post[2]["predicates"]["same_observation_repeated"]
    )
    assert (
        before[0]["predicates"]["action_not_admissible"]
        and not before[3]["predicates"]["action_not_admissible"]
    )
    assert (
        len(post[-1]["history"]["last_actions"]) == 6 and len(post[-1]["history"]["last_observations"]) == 4
    )
    assert post[-1]["predicates"]["remaining_steps_low"] and post[-1]["state"]["remaining_steps"] == 0


def test_benchmarks_are_a_registry_derived_from_the_kits() -> None:
    from reharness.core.errors import ConfigError, UnknownNameError
    from reharness.envs.registry import make_env
    from reharness.runtime.r1.factory import make_adapter, r1_benchmark, r1_benchmark_registry, r1_benchmarks

    assert r1_benchmarks() == {"alfworld": "household", "webshop": "shop", "dbbench": "db"}
    assert r1_benchmark("shop") == "webshop" and r1_benchmark("code") == "code"  # no benchmark: itself
    with pytest.raises(UnknownNameError) as err:
        r1_benchmark_registry().get("webshp")
    assert err.value.message == "unknown Harness-R1 benchmark 'webshp'"
    assert "did you mean 'webshop'" in (err.value.hint or "")
    with pytest.raises(ConfigError, match="need a Harness-R1 benchmark") as none:
        make_adapter(make_env("code"), 10)
    assert "household (alfworld)" in (none.value.hint or "")
