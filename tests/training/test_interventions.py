"""Harness interventions in tiny-agent demonstrations: rendered like runtime effects, always heeded."""

from __future__ import annotations

import random

import pytest

from reharness.runtime.harness import base_harness_config
from reharness.training.tiny.demos import render_demos
from reharness.training.tiny.interventions import (
    InterventionRates,
    add_interventions,
    compact,
)


def _assistant_turns(demo):  # type: ignore[no-untyped-def]
    return [i for i, m in enumerate(demo.messages) if m.role == "assistant"]


def _action(reply: str) -> str:
    return compact(reply.split("Action: ", 1)[1] if reply.startswith("Action: ") else reply)


def test_without_rates_demos_are_unchanged_and_have_no_notes() -> None:
    plain, _ = render_demos("household", 3, seed=2, perturb_prob=0.3)
    again, _ = render_demos("household", 3, seed=2, perturb_prob=0.3, interventions=None)
    assert [d.messages for d in plain] == [d.messages for d in again]
    assert not any("[Harness]" in m.content for d in plain for m in d.messages)


def test_household_hints_and_blocks_name_the_next_expert_action() -> None:
    rates = InterventionRates(after_perturbed=1.0, block_share=0.5, premature=0.0, reminder=0.0)
    demos, _ = render_demos("household", 6, seed=3, perturb_prob=0.3, interventions=rates)
    again, _ = render_demos("household", 6, seed=3, perturb_prob=0.3, interventions=rates)
    assert [(d.messages, d.supervised) for d in demos] == [(d.messages, d.supervised) for d in again]
    config = base_harness_config("household")
    hints = blocks = 0
    for demo in demos:
        turns = _assistant_turns(demo)
        assert len(turns) == len(demo.supervised)
        for k, index in enumerate(turns[:-1]):
            if demo.supervised[k] or not demo.supervised[k + 1]:
                continue
            feedback = demo.messages[index + 1].content
            expert = _action(demo.messages[turns[k + 1]].content)
            if "[Harness]" in feedback:  # a hint appended to the env's real feedback
                hints += 1
                assert feedback.startswith("Observation: ")
                assert expert in feedback.split("[Harness]", 1)[1]
            else:  # a block replaces the feedback; only after an action the env rejected
                blocks += 1
                assert "Admissible actions:" not in feedback
                shown = feedback[len("Observation: ") :]
                assert feedback == config.feedback_template.format(observation=shown)
                assert feedback.endswith(expert)
    assert hints > 0 and blocks > 0


def test_db_premature_answers_are_blocked_and_unsupervised() -> None:
    rates = InterventionRates(after_perturbed=0.0, premature=1.0, reminder=0.0)
    demos, _ = render_demos("db", 4, seed=0, perturb_prob=0.0, interventions=rates)
    inserted = 0
    for demo in demos:
        turns = _assistant_turns(demo)
        for k, index in enumerate(turns):
            reply = demo.messages[index].content
            if demo.supervised[k]:
                continue
            inserted += 1  # no perturbations: every unsupervised turn is an inserted premature answer
            assert "Final Answer" in reply
            nxt = demo.messages[turns[k + 1]].content
            assert "Final Answer" not in nxt and demo.supervised[k + 1]
            assert demo.messages[index + 1].content.endswith(_action(nxt))
    assert inserted > 0


def test_reminders_quote_the_instruction() -> None:
    rates = InterventionRates(after_perturbed=0.0, premature=0.0, reminder=1.0)
    demo = render_demos("shop", 1, seed=1, perturb_prob=0.0, interventions=rates)[0][0]
    notes = [m.content for m in demo.messages if "[Harness] Remember the task:" in m.content]
    assert len(notes) == sum(demo.supervised)
    tail = " Check that your next action brings you closer to it."
    for note in notes:
        instruction = note.split("[Harness] Remember the task: ", 1)[1].removesuffix(tail)
        assert instruction and instruction in demo.messages[1].content  # the task as the first turn shows it


def test_mismatched_turn_facts_are_rejected() -> None:
    config = base_harness_config("household")
    with pytest.raises(ValueError, match="turn facts"):
        add_interventions((), (True,), [], config, "x", random.Random(0), InterventionRates())
