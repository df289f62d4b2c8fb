"""The ``r1`` dialect in the sandbox worker and Harness-R1's return-value normalisation (spec §1.3-§1.5)."""

# ruff: noqa: E501 - hook sources and spec tables are written out one per line

from __future__ import annotations

from typing import Any

import pytest

from reharness.patches.errors import PatchRuntimeError
from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
from reharness.runtime.r1.normalise import normalise

R1 = SandboxLimits(dialect="r1")


def run(code: str, ctx: dict[str, Any], nb: dict[str, Any] | None = None, limits: SandboxLimits = R1) -> Any:
    with HookWorker({"on_post_step": code}, limits) as worker:
        return worker.call("on_post_step", ctx, nb or {}).value


def test_ctx_is_a_dict_subclass_with_attribute_reads_and_lists() -> None:
    code = """
def hook(ctx, nb):
    ctx["x"] = 1
    ctx.state["page_type"] = "changed"
    return [isinstance(ctx, dict), isinstance(ctx.state, dict), ctx.state.page_type, ctx["state"]["page_type"],
            isinstance(ctx.webshop.search_queries, list), ctx.get("observation"), ctx.get("missing", "dflt")]
"""
    value = run(code, {"state": {"page_type": "home"}, "webshop": {"search_queries": ["a"]}})
    assert value == [True, True, "changed", "changed", True, None, "dflt"]


def test_missing_attribute_raises_and_get_is_none() -> None:
    db_ctx = {"action": {}, "state": {}, "task": {}, "dbbench": {}, "predicates": {}}
    assert run("def hook(ctx, nb):\n    return ctx.get('observation')\n", db_ctx) is None
    with pytest.raises(PatchRuntimeError) as caught:
        run("def hook(ctx, nb):\n    return ctx.observation\n", db_ctx)
    assert "AttributeError" in caught.value.message and "observation" in caught.value.message


def test_namespace_has_the_25_builtins_and_the_injected_modules() -> None:
    code = """
def hook(ctx, nb):
    return [sorted(dir_names(nb)), re.sub("a", "b", "aa"), math.sqrt(4.0), SequenceMatcher(None, "ab", "ab").ratio()]

def dir_names(nb):
    return [k for k in nb]
"""
    assert run(code, {}, {"k": 1}) == [["k"], "bb", 2.0, 1.0]
    for name in ("print", "hasattr", "next", "iter", "repr", "ord", "chr", "pow", "divmod", "frozenset"):
        with pytest.raises(PatchRuntimeError) as caught:
            run(f"def hook(ctx, nb):\n    return {name}\n", {})
        assert "NameError" in caught.value.message
    for name in ("abs", "sorted", "isinstance", "Exception", "zip", "reversed", "round", "filter"):
        assert run(f"def hook(ctx, nb):\n    return str({name})[:1]\n", {}) == "<"


def test_each_code_block_has_its_own_namespace() -> None:
    hooks = {
        "on_init": "def shared(x):\n    return x\n\ndef hook(ctx, nb):\n    nb['init'] = shared(1)\n    return None\n",
        "on_post_step": "def hook(ctx, nb):\n    return shared(2)\n",
    }
    with HookWorker(hooks, R1) as worker:
        assert worker.call("on_init", {}, {}).nb == {"init": 1}  # nb is shared between hooks
        with pytest.raises(PatchRuntimeError) as caught:
            worker.call("on_post_step", {}, {})
    assert "NameError" in caught.value.message


def test_line_budget_stops_long_hooks_as_upstream() -> None:
    loop = (
        "def hook(ctx, nb):\n    total = 0\n    for i in range(5000):\n        total += i\n    return total\n"
    )
    with pytest.raises(PatchRuntimeError) as caught:
        run(loop, {})
    assert "LineBudgetExceeded" in caught.value.message
    # library code counts too: one SequenceMatcher ratio on ~30 vs ~70 characters is over 2000 lines
    ratio = "def hook(ctx, nb):\n    return SequenceMatcher(None, ctx['a'], ctx['b']).ratio()\n"
    long = {
        "a": "find me a pair of red shoes size 8",
        "b": "search results for red running shoes in size eight " * 2,
    }
    with pytest.raises(PatchRuntimeError):
        run(ratio, long)
    assert run(loop, {}, limits=SandboxLimits()) == sum(range(5000))  # reharness's dialect has no line budget


ADMISSIBLE = ["go to cabinet 1", "take mug 1 from cabinet 1", "look"]


@pytest.mark.parametrize(
    ("hook", "value", "expected"),
    [
        ("on_post_step", None, None),
        ("on_post_step", "inject_hint", None),
        ("on_post_step", {"type": "inject_hint", "message": "m"}, None),  # no aliases
        ("on_post_step", {"kind": "hint", "message": "m"}, None),
        ("on_post_step", {"kind": " inject_hint ", "message": "  a \n  b "}, {"kind": "inject_hint", "message": "a b"}),
        ("on_post_step", {"kind": "inject_hint", "message": ""}, None),
        ("on_post_step", {"kind": "inject_hint", "message": 5}, None),
        ("on_post_step", {"kind": "block_and_prompt", "message": "m"}, None),  # not valid after a step
        ("on_before_action", {"kind": "inject_hint", "message": "m"}, None),  # not valid before an action
        ("on_before_action", {"kind": "block_and_prompt"}, None),
        ("on_before_action", {"kind": "block_and_prompt", "message": "x" * 1000}, {"kind": "block_and_prompt", "message": "x" * 900}),
        ("on_before_action", {"kind": "rewrite_action", "action": "  Take  MUG 1 from Cabinet 1 "},
         {"kind": "rewrite_action", "action": "take mug 1 from cabinet 1"}),
        ("on_before_action", {"kind": "rewrite_action", "action": "take mug 2 from cabinet 1", "message": "m"}, None),
        ("on_before_action", {"kind": "force_action", "action": "LOOK", "message": "m"},
         {"kind": "force_action", "action": "look", "message": "m"}),
        ("on_before_action", {"kind": "force_action", "action": 3}, None),
        ("on_post_step", {"kind": "force_action", "action": "go to shelf 9", "message": "try"},
         {"kind": "inject_hint", "message": "try"}),  # dropped action degrades to a hint
        ("on_post_step", {"kind": "force_action", "action": "go to shelf 9"}, None),
        ("make_pre_hint", {"kind": "inject_hint", "message": " hi "}, {"message": "hi"}),
        ("make_pre_hint", {"kind": "block_and_prompt"}, None),
        ("on_init", {"skills": ["a", {"text": " b ", "id": "x"}, {"id": "no text"}, "", "c", "d", "e"], "kind": "x"},
         {"skills": [{"id": "code_hook_skill", "text": t, "trigger": "code_hook"} for t in ("a", "b", "c")]}),
        ("on_init", {"skills": ("a",), "tool_hint": "  use  search  "}, {"tool_hint": "use search"}),
        ("on_init", {"message": "m"}, None),
        ("unknown_hook", {"kind": "inject_hint", "message": "m"}, None),
    ],
)  # fmt: skip
def test_official_normalisation(hook: str, value: Any, expected: Any) -> None:
    assert normalise(hook, value, ADMISSIBLE) == expected


def test_numbered_actions_without_admissible_are_dropped_everywhere() -> None:
    """WebShop/DBBench ctx has no ``admissible``: ``click[use 2 pack]`` is silently discarded there."""
    assert (
        normalise("on_before_action", {"kind": "rewrite_action", "action": "click[use 2 pack]"}, None) is None
    )
    kept = normalise("on_before_action", {"kind": "rewrite_action", "action": "Click[Red]"}, None)
    assert kept == {"kind": "rewrite_action", "action": "click[red]"}


@pytest.mark.parametrize("isolation", ["standard", "inprocess"])
def test_notebook_writes_before_a_failure_persist_in_r1(isolation: str) -> None:
    code = "def hook(ctx, nb):\n    nb['calls'] = nb.get('calls', 0) + 1\n    return ctx.missing\n"
    for dialect, kept in (("r1", {"calls": 1}), ("reharness", None)):
        limits = SandboxLimits(dialect=dialect, isolation=isolation)  # type: ignore[arg-type]
        with HookWorker({"on_post_step": code}, limits) as worker, pytest.raises(PatchRuntimeError) as caught:
            worker.call("on_post_step", {}, {})
        assert caught.value.nb == kept


def test_notebook_writes_before_a_failure_persist_across_an_episode() -> None:
    from r1_helpers import r1_overlay, run_episode

    code = """
def hook(ctx, nb):
    nb["n"] = nb.get("n", 0) + 1
    if nb["n"] % 2 == 1:
        return ctx.no_such_field
    return {"message": "calls " + str(nb["n"])}
"""
    record = run_episode("household", [r1_overlay("household", {"make_pre_hint": code})])
    messages = [e["text"] for s in record.steps for e in s.effects]
    assert messages[:2] == ["calls 2", "calls 4"]  # the failed odd calls still counted
    assert len([e for s in record.steps for e in s.hook_errors]) == (record.num_steps + 1) // 2
