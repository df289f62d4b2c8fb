"""Official-style patches on the solver: every effect kind takes hold as in Harness-R1 (spec §1.5, §1.6)."""

# ruff: noqa: E501 - hook sources and spec tables are written out one per line

from __future__ import annotations

from typing import Any

import pytest
from r1_helpers import r1_overlay, run_episode

from reharness.core.types import ChatRequest, ChatResponse
from reharness.patches.model import Patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.validate import validate_patch
from reharness.runtime.agents import SolverAgent


class RecordingSolver(SolverAgent):
    """The solver, remembering every request it was sent (to see hints in the next prompt)."""

    requests: list[ChatRequest]

    def start_episode(self, env: Any, protocol: str) -> RecordingSolver:
        agent = RecordingSolver(env, protocol)
        agent.requests = self.requests
        return agent

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return await super().complete(request)


def solver() -> RecordingSolver:
    agent = RecordingSolver()
    agent.requests = []
    return agent


def prompt_text(request: ChatRequest) -> str:
    return "\n".join(str(m.content) for m in request.messages)


def test_household_block_hint_pre_hint_and_init() -> None:
    hooks = {
        "on_init": "def hook(ctx, nb):\n    return {'skills': ['Look inside receptacles.'], 'tool_hint': 'Prefer admissible commands.'}\n",
        "make_pre_hint": "def hook(ctx, nb):\n    if ctx.step == 2:\n        return {'kind': 'inject_hint', 'message': 'PRE-HINT step two'}\n    return None\n",
        "on_before_action": """
def hook(ctx, nb):
    if ctx.action.normalized.startswith("go to") and not nb.get("blocked"):
        nb["blocked"] = 1
        return {"kind": "block_and_prompt", "message": "BLOCKED: think first"}
    return None
""",
        "on_post_step": "def hook(ctx, nb):\n    return {'kind': 'inject_hint', 'message': 'POST-HINT ' + ctx.action.final_action}\n",
    }  # fmt: skip
    agent = solver()
    record = run_episode("household", [r1_overlay("household", hooks)], agent)
    assert record.success and not any(s.hook_errors for s in record.steps)
    first = record.steps[0]
    assert "blocked" in first.flags and first.action is None and first.observation == "BLOCKED: think first"
    assert "BLOCKED: think first" in prompt_text(agent.requests[1])
    system = str(agent.requests[0].messages[0].content)
    assert "Some tips that may help for this task:\n- Look inside receptacles." in system
    assert "Additional reusable tool-use hint from the harness: Prefer admissible commands." in system
    executed = record.steps[1].action
    assert f"[Harness] POST-HINT {executed}" in prompt_text(agent.requests[2])  # hint in the next prompt
    assert "[Harness] PRE-HINT step two" in prompt_text(agent.requests[2])
    assert "PRE-HINT" not in prompt_text(agent.requests[1])


def test_household_rewrites_follow_the_numbered_instance_rule() -> None:
    before = """
def hook(ctx, nb):
    n = nb.get("n", 0)
    nb["n"] = n + 1
    if n == 0:
        return {"kind": "rewrite_action", "action": "  LOOK ", "message": "rewrote to look"}
    if n == 1:
        return {"kind": "rewrite_action", "action": "go to " + "shelf 99"}
    if n == 2:
        return {"kind": "force_action", "action": ctx.admissible[-3]}
    return None
"""
    agent = solver()
    record = run_episode("household", [r1_overlay("household", {"on_before_action": before})], agent)
    s0, s1, s2 = record.steps[:3]
    assert (
        s0.parsed_action != "look" and s0.action == "look" and "rewritten" in s0.flags
    )  # unchecked: no number
    assert "[Harness] rewrote to look" in prompt_text(agent.requests[1])  # the optional message is shown
    assert s1.action == s1.parsed_action and not s1.effects  # numbered, not admissible: dropped upstream
    assert "forced" in s2.flags and s2.action != s2.parsed_action
    assert not any(s.hook_errors for s in record.steps)


def test_household_post_step_force_replaces_the_next_proposal() -> None:
    hooks = {
        "on_post_step": "def hook(ctx, nb):\n    if ctx.step == 0:\n        return {'kind': 'force_action', 'action': 'INVENTORY'}\n    return None\n",
        "on_before_action": "def hook(ctx, nb):\n    nb.setdefault('seen', []).append(ctx.action.final_action)\n    if ctx.action.final_action == 'inventory':\n        return {'kind': 'inject_hint', 'message': 'x'}\n    return None\n",
    }  # fmt: skip
    agent = solver()
    record = run_episode("household", [r1_overlay("household", hooks)], agent)
    forced = record.steps[1]
    assert forced.action == "inventory" and "forced" in forced.flags and forced.source == "hook"
    assert (
        forced.output is not None and forced.output.text
    )  # the model was still asked (consumed at a tool turn)
    assert len(agent.requests) == record.num_steps
    assert record.success


def test_shop_bare_values_are_wrapped() -> None:
    before = """
def hook(ctx, nb):
    if ctx.action.tool == "search_action" and not nb.get("s"):
        nb["s"] = 1
        return {"kind": "rewrite_action", "action": ctx.action.value_normalized + " cheap"}
    if ctx.action.value_normalized == "buy now" and not nb.get("b"):
        nb["b"] = 1
        return {"kind": "rewrite_action", "action": "Description"}
    return None
"""
    record = run_episode("shop", [r1_overlay("shop", {"on_before_action": before})])
    search = record.steps[0]
    assert search.action == search.parsed_action.lower()[:-1] + " cheap]"  # search[... cheap]
    described = [s for s in record.steps if s.parsed_action == "click[buy now]"][0]
    assert described.action == "click[description]" and "rewritten" in described.flags
    assert not any(s.hook_errors for s in record.steps)


def test_shop_rewrite_of_a_bare_option_value_becomes_a_click() -> None:
    before = """
def hook(ctx, nb):
    options = ctx.webshop.attribute_options
    if ctx.action.value_normalized == "buy now" and options and not nb.get("o"):
        nb["o"] = 1
        group = sorted(options)[0]
        nb["value"] = options[group][-1]
        return {"kind": "rewrite_action", "action": options[group][-1], "message": "pick an option first"}
    return None
"""
    record = run_episode("shop", [r1_overlay("shop", {"on_before_action": before})])
    rewritten = [s for s in record.steps if "rewritten" in s.flags][0]
    assert rewritten.parsed_action == "click[buy now]"
    assert rewritten.action.startswith("click[") and rewritten.action != "click[buy now]"
    assert rewritten.action[6:-1] in rewritten.observation.lower()  # the env clicked the option value


def test_shop_post_step_force_wraps_as_click() -> None:
    post = "def hook(ctx, nb):\n    if ctx.state.page_type == 'search_results' and not nb.get('f'):\n        nb['f'] = 1\n        return {'kind': 'force_action', 'action': 'next >'}\n    return None\n"  # noqa: E501
    record = run_episode("shop", [r1_overlay("shop", {"on_post_step": post})])
    assert record.steps[1].action == "click[next >]" and "forced" in record.steps[1].flags


def test_db_honours_block_hint_pre_hint_and_init_only() -> None:
    hooks = {
        "on_init": "def hook(ctx, nb):\n    return {'skills': [{'text': 'Check the schema.'}], 'tool_hint': 'Quote names.'}\n",
        "on_before_action": """
def hook(ctx, nb):
    if ctx.predicates.execute_sql and not nb.get("r"):
        nb["r"] = 1
        return {"kind": "rewrite_action", "action": "select 1"}
    if ctx.predicates.commit_final_answer and not nb.get("b"):
        nb["b"] = 1
        return {"kind": "block_and_prompt", "message": "Verify the answer before committing."}
    return None
""",
        "on_post_step": "def hook(ctx, nb):\n    return {'kind': 'inject_hint', 'message': 'kind=' + ctx.state.last_error_kind}\n",
    }  # fmt: skip
    agent = solver()
    record = run_episode("db", [r1_overlay("db", hooks)], agent)
    sql = record.steps[0]
    assert sql.action == sql.parsed_action and sql.dropped_effects[0]["kind"] == "rewrite"  # ignored upstream
    assert "[Harness] kind=ok" in prompt_text(agent.requests[1])
    blocked = record.steps[1]
    assert "blocked" in blocked.flags and blocked.observation == "Verify the answer before committing."
    system = str(agent.requests[0].messages[0].content)
    assert "- Check the schema." in system and "hint from the harness: Quote names." in system
    assert record.success and record.num_steps == 3


def test_hook_errors_are_recorded_and_the_episode_behaves_as_unpatched() -> None:
    broken = {
        "make_pre_hint": "def hook(ctx, nb):\n    return {'message': ctx.no_such_field}\n",
        "on_post_step": "def hook(ctx, nb):\n    print('x')\n    return {'kind': 'inject_hint', 'message': 'never'}\n",
    }
    baseline = run_episode("household", [])
    record = run_episode("household", [r1_overlay("household", broken)])
    assert [s.action for s in record.steps] == [s.action for s in baseline.steps]
    errors = [e for s in record.steps for e in s.hook_errors]
    assert errors and {e.point for e in errors} == {"before_decision", "after_feedback"}
    assert any("AttributeError" in e.message for e in errors) and any(
        "NameError" in e.message for e in errors
    )
    assert not any(s.effects for s in record.steps)


@pytest.mark.slow  # loads torch + the shipped tiny agent
def test_official_patch_on_the_tiny_household_agent() -> None:
    pytest.importorskip("torch")
    from reharness.runtime.agent_specs import make_agent

    hooks = {
        "on_post_step": "def hook(ctx, nb):\n    if ctx.predicates.nothing_happens_repeated:\n        return {'kind': 'inject_hint', 'message': 'Choose one of the admissible commands.'}\n    return None\n",
        "make_pre_hint": "def hook(ctx, nb):\n    return {'message': 'Step ' + str(ctx.step) + ' of ' + str(ctx.max_step)}\n",
    }  # fmt: skip
    agent = make_agent("tiny:household-S", train_missing=False)
    for task in range(3):
        record = run_episode("household", [r1_overlay("household", hooks)], agent, task=task)
        assert not any(s.hook_errors for s in record.steps)
        messages = [e["text"] for s in record.steps for e in s.effects if e["kind"] == "message"]
        assert messages[0] == "Step 0 of 50" and len(messages) == record.num_steps


MATRIX = {
    "on_init": "def hook(ctx, nb):\n    return {'skills': ['TIP-A'], 'tool_hint': 'HINT-T'}\n",
    "make_pre_hint": "def hook(ctx, nb):\n    nb['pre'] = nb.get('pre', 0) + 1\n    if nb['pre'] == 1:\n        return {'message': 'PRE-1'}\n    return None\n",
    "on_before_action": """
def hook(ctx, nb):
    nb["before"] = nb.get("before", 0) + 1
    if nb["before"] == 1:
        return {"kind": "block_and_prompt", "message": "BLOCK-1"}
    if nb["before"] == 2:
        return {"kind": "force_action", "action": FORCE_BEFORE, "message": "FORCED-1"}
    return None
""",
    "on_post_step": """
def hook(ctx, nb):
    nb["post"] = nb.get("post", 0) + 1
    if nb["post"] == 1:
        return {"kind": "inject_hint", "message": "POST-1"}
    if nb["post"] == 2:
        return {"kind": "force_action", "action": FORCE_AFTER}
    return None
""",
}  # fmt: skip
#: Per benchmark: the before-action force (a bare WebShop value is wrapped), the post-step force.
FORCES = {
    "household": ("'look'", "'inventory'", "look", "inventory"),
    "shop": ("ctx.action.value", "'back to search'", None, "click[back to search]"),
    "db": ("'select 1'", "'select 2'", None, None),  # DBBench ignores both
}


@pytest.mark.parametrize("env_name", ["household", "shop", "db"])
def test_every_effect_kind_at_every_hook_point(env_name: str) -> None:
    before, after, forced_before, forced_after = FORCES[env_name]
    hooks = {h: c.replace("FORCE_BEFORE", before).replace("FORCE_AFTER", after) for h, c in MATRIX.items()}
    agent = solver()
    record = run_episode(env_name, [r1_overlay(env_name, hooks)], agent)
    assert record.success and not any(s.hook_errors for s in record.steps)
    system = str(agent.requests[0].messages[0].content)
    assert "- TIP-A" in system and "hint from the harness: HINT-T" in system  # text protocols: system prompt
    assert "[Harness] PRE-1" in prompt_text(agent.requests[0])
    assert "PRE-1" not in prompt_text(agent.requests[1]).split("BLOCK-1")[-1]  # fired once
    blocked, second = record.steps[0], record.steps[1]
    assert "blocked" in blocked.flags and blocked.observation == "BLOCK-1"
    if env_name == "db":  # DBBench ignores forces: recorded as dropped, the proposal runs
        assert second.action == second.parsed_action and second.dropped_effects[0]["kind"] == "force"
    else:
        expected = forced_before or second.parsed_action  # shop: the bare value wrapped back as the click
        assert second.action == expected and "forced" in second.flags
        assert "[Harness] FORCED-1" in prompt_text(agent.requests[2])
    assert "[Harness] POST-1" in prompt_text(agent.requests[2])
    if env_name == "db":  # blocked SQL, the SQL again, the commit: no on_post_step after a commit
        assert record.num_steps == 3 and record.steps[2].flags == []
        return
    third = record.steps[3]  # post #1 after step 1 (step 0 was blocked), post #2 after step 2
    assert third.action == forced_after and "forced" in third.flags and third.source == "hook"


def test_db_post_step_force_is_ignored() -> None:
    post = "def hook(ctx, nb):\n    return {'kind': 'force_action', 'action': 'select 1', 'message': 'm'}\n"
    record = run_episode("db", [r1_overlay("db", {"on_post_step": post})])
    first = record.steps[0]
    assert (
        first.dropped_effects[0]["kind"] == "force"
        and "does not honour" in first.dropped_effects[0]["reason"]
    )
    assert record.steps[1].action == record.steps[1].parsed_action and record.success


@pytest.mark.parametrize("env_name", ["household", "shop", "db"])
def test_tool_hint_with_the_tools_protocol(env_name: str) -> None:
    init = "def hook(ctx, nb):\n    return {'tool_hint': 'Quote exactly.'}\n"
    agent = solver()
    record = run_episode(env_name, [r1_overlay(env_name, {"on_init": init})], agent, protocol="tools")
    assert record.success
    request = agent.requests[0]
    descriptions = {t["function"]["name"]: t["function"]["description"] for t in request.tools}
    system = str(request.messages[0].content)
    if env_name == "db":  # DBBench: the system prompt, tool descriptions unchanged
        assert "hint from the harness: Quote exactly." in system
        assert not any("Quote exactly." in d for d in descriptions.values())
    else:  # WebShop: every tool; ALFWorld: take_action
        assert all(d.endswith("\n\nQuote exactly.") for d in descriptions.values()) and "Quote" not in system


def test_a_repeated_hook_runs_every_block_in_order_each_in_its_own_namespace() -> None:
    first = "def label(ctx):\n    return 'A'\n\ndef hook(ctx, nb):\n    return {'kind': 'inject_hint', 'message': label(ctx) + str(ctx.step)}\n"
    broken = "def hook(ctx, nb):\n    return ctx.no_such_field\n"
    second = "def label(ctx):\n    return 'B'\n\ndef hook(ctx, nb):\n    return {'kind': 'inject_hint', 'message': label(ctx) + str(ctx.step)}\n"
    doc = {
        "schema_version": "harness-r1-patch-v1",
        "benchmark": "alfworld",
        "description": "three blocks of one hook",
        "actions": [
            {"type": "add_code_hook", "hook": "on_post_step", "code": c} for c in (first, broken, second)
        ],
    }
    patch = Patch.from_dict(doc)
    assert list(patch.hooks) == ["after_feedback"] and validate_patch(patch) == []
    assert [a["code"] for a in patch.to_harness_r1()["actions"]] == [first, broken, second]  # round trip
    agent = solver()
    record = run_episode("household", [PatchOverlay(patch)], agent)
    assert record.success
    hints = [e["text"] for e in record.steps[0].effects]
    assert hints == ["A0", "B0"]  # in patch order; each block sees its own helper `label`
    assert "[Harness] A0\n\n[Harness] B0" in prompt_text(agent.requests[1])
    errors = [e for s in record.steps for e in s.hook_errors]
    assert len(errors) == record.num_steps and all("AttributeError" in e.message for e in errors)
    bad = dict(
        doc,
        actions=[
            *doc["actions"],
            {"type": "add_code_hook", "hook": "on_post_step", "code": "import re\n" + first},
        ],
    )
    checked = Patch.from_dict(bad)
    errors = validate_patch(checked)
    joined = checked.hooks["after_feedback"].splitlines()
    assert errors and all(
        joined[e.line - 1].strip() == "import re" for e in errors
    )  # the joined source's line
