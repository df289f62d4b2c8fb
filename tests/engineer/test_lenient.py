"""Repairing replies that yield no action: the runtime path (hooks see ``ctx.action.text`` None and the raw
reply) and the lenient operators that use it, in real household and shop episodes with the patch in the
sandbox."""

from __future__ import annotations

from typing import Any

import pytest
from proposer_helpers import EnvAgent, episode, random_packet

from reharness.core.types import ChatRequest
from reharness.engineer.operators import merge
from reharness.engineer.operators.lenient import (
    LENIENT_OPERATORS,
    LenientExtract,
    SnapFreeText,
    StripTemplateNoise,
)
from reharness.patches import LeakageEvidence, validate_patch
from reharness.patches.model import Patch
from reharness.store.records import trajectory_digest


def prose_household() -> EnvAgent:
    """A pretrained model's habit: the command inside prose, quoted, never on an 'Action:' line."""

    def reply(env: Any, request: ChatRequest, decision: int) -> str:
        options = env.admissible_actions() or ["look"]
        return f'Sure! To solve this task I think you should\n"{env.expert_action()}" now.\n(or {options[0]})'

    return EnvAgent(reply, name="prose")


def steps_of(record: Any) -> list[dict[str, Any]]:
    return [s.model_dump(exclude={"duration_s"}) for s in record.steps]


def test_every_lenient_variant_validates() -> None:
    strict = LeakageEvidence(any_numbered_instance=True)
    checked = 0
    for op in LENIENT_OPERATORS:
        envs = [env for env in ("household", "shop", "db", "code", "apps") if op.applies_to(env)]
        assert envs == ["household", "shop"]  # kits whose raw protocol always parses leave them out
        for env in envs:
            checked += 1
            evidence = random_packet(env).leakage_evidence()
            for params in op.variants(env):
                patch = op.build(params, env)
                assert validate_patch(patch, evidence=evidence) == [], (op.name, env, params)
                assert validate_patch(patch, evidence=strict) == [], (op.name, env, params)
    assert checked == 2 * len(LENIENT_OPERATORS)


def test_an_unparsed_reply_is_repaired_by_lenient_extraction() -> None:
    base = episode("household", prose_household(), step_limit=12)
    assert base.steps and all("format_error" in s.flags for s in base.steps)
    assert not base.success
    patched = episode("household", prose_household(), LenientExtract().build({}, "household"), step_limit=12)
    first = patched.steps[0]
    assert first.parsed_action is None and first.parse_error  # the reply still did not parse ...
    assert first.action and "rewritten" in first.flags  # ... but the hook supplied the action
    assert first.effects and first.effects[0]["overlay"]
    assert patched.success  # the quoted expert action each step solves the task


def test_a_hook_without_effect_leaves_the_trajectory_unchanged() -> None:
    # a hook that crashes on text None, and one that writes its notebook then returns nothing
    crash = Patch(
        description="crashes on None",
        env="household",
        hooks={
            "before_action": "def hook(ctx, nb):\n    return ctx.get('action').get('text').lower() and None\n"
        },
    )
    scribble = Patch(
        description="notes only",
        env="household",
        hooks={
            "before_action": "def hook(ctx, nb):\n    nb['seen'] = nb.get('seen', 0) + 1\n    return None\n"
        },
    )
    base = episode("household", prose_household(), step_limit=4)
    for patch in (crash, scribble):
        record = episode("household", prose_household(), patch, step_limit=4)
        assert [s.hook_errors for s in record.steps] == [[] for _ in record.steps]
        assert steps_of(record) == steps_of(base)
        assert trajectory_digest([record]) == trajectory_digest([base])


def test_a_block_on_an_unparsed_reply_returns_its_message() -> None:
    block = Patch(
        description="block",
        env="household",
        hooks={
            "before_action": "def hook(ctx, nb):\n"
            "    if ctx.get('action').get('text') is None:\n"
            "        return {'type': 'block_and_prompt', 'message': 'Write one line Action: <command>.'}\n"
            "    return None\n"
        },
    )
    record = episode("household", prose_household(), block, step_limit=3)
    assert all(s.observation == "Write one line Action: <command>." for s in record.steps)
    assert all({"format_error", "blocked"} <= set(s.flags) for s in record.steps)


def test_snapping_free_text_and_stripping_noise() -> None:
    def near_miss(env: Any, request: ChatRequest, decision: int) -> str:
        return f"I will {env.expert_action().replace('go to ', 'walk to the ')} right away\nand then see."

    agent = EnvAgent(near_miss, name="near")
    base = episode("household", agent, step_limit=6)
    snapped = episode("household", agent, SnapFreeText().build({"cutoff": 0.5}, "household"), step_limit=6)
    assert sum("rewritten" in s.flags for s in snapped.steps) > 0
    assert snapped.total_reward >= base.total_reward

    def noisy(env: Any, request: ChatRequest, decision: int) -> str:
        return f"Action: **{env.expert_action()}**.<|im_end|>"

    noisy_agent = EnvAgent(noisy, name="noisy")
    plain = episode("household", noisy_agent, step_limit=12)
    assert not plain.success
    cleaned = episode("household", noisy_agent, StripTemplateNoise().build({}, "household"), step_limit=12)
    assert cleaned.success


@pytest.mark.parametrize("env", ["shop"])
def test_shop_actions_written_in_prose_are_extracted(env: str) -> None:
    def prose(env_: Any, request: ChatRequest, decision: int) -> str:
        return f"Let me think.\nThe best next step is to {env_.expert_action()} because it matches."

    patch = merge([(LenientExtract(), {})], env)
    base = episode(env, EnvAgent(prose, name="prose"), step_limit=15)
    patched = episode(env, EnvAgent(prose, name="prose"), patch, step_limit=15)
    assert all("format_error" in s.flags for s in base.steps)
    assert patched.success and not base.success


def parrot_household() -> EnvAgent:
    """A pretrained model's other habit: it echoes the task text (SmolLM2 in the base household harness)
    unless a message lists commands; then it quotes, in prose, the listed command the expert would take (the
    first one listed when the expert's is not there)."""

    def reply(env: Any, request: ChatRequest, decision: int) -> str:
        last = request.messages[-1].content
        marker = "copied exactly from: "
        if marker not in last:
            return request.messages[1].content[:120]  # the echo: no action in it
        listed = last.split(marker, 1)[1].rstrip(".").split("; ")
        expert = env.expert_action()
        pick = expert if expert in listed else listed[0]
        return f'Sure! Looking at the options,\nI would do "{pick}" next.'

    return EnvAgent(reply, name="parrot")


def test_shown_options_give_a_model_that_ignores_the_protocol_names_to_copy() -> None:
    from reharness.engineer.operators.lenient import ShowOptions

    base = episode("household", parrot_household(), step_limit=10)
    assert all("format_error" in s.flags and not s.action for s in base.steps)  # it never acts
    for at_start in (False, True):
        patch = merge(
            [(ShowOptions(), {"shown": 24, "at_start": at_start}), (LenientExtract(), {})], "household"
        )
        agent = parrot_household()
        record = episode("household", agent, patch, step_limit=10)
        listed = ["copied exactly from: " in r.messages[-1].content for r in agent.requests]
        assert listed[0] is at_start and all(listed[1:])  # after the first unparsed reply, every time
        acted = [s for s in record.steps if "rewritten" in s.flags and s.action]
        assert len(acted) >= len(record.steps) - 1  # every reply that saw the list became an action
        assert record.total_reward >= base.total_reward
