"""The Self-Refine baseline: one fixed reflection rule, proposals that differ only in wording."""

from __future__ import annotations

import asyncio

import pytest
from proposer_helpers import episode, random_packet, sloppy_household

from reharness.engineer import SelfRefineEngineer, make_engineer
from reharness.engineer.self_refine import WORDINGS, reflection_patch
from reharness.patches import extract_patch, validate_patch

ENVS = ("household", "shop", "db")


@pytest.mark.parametrize("env", ENVS)
def test_proposals_are_the_same_rule_in_different_words(env: str) -> None:
    packet = random_packet(env)
    proposals = asyncio.run(make_engineer("self-refine").propose(packet, 5, seed=1))
    assert len(proposals) == 5 and all(p.valid for p in proposals)
    patches = [p.patch for p in proposals if p.patch is not None]
    assert {p.env for p in patches} == {env}
    assert {tuple(p.hooks) for p in patches} == {("before_decision",)}  # text only: honoured everywhere
    assert len({p.identity for p in patches}) == 5
    wordings = [WORDINGS[p.meta["wording"]] for p in proposals]
    templates = {
        p.hooks["before_decision"].replace(repr(w), "MESSAGE") for p, w in zip(patches, wordings, strict=True)
    }
    assert len(templates) == 1 and len(set(wordings)) == 5  # one rule, five wordings
    assert all(validate_patch(p, evidence=packet.leakage_evidence()) == [] for p in patches)
    assert all(extract_patch(p.raw_reply).identity == p.patch.identity for p in proposals if p.patch)


def test_wording_is_deterministic_by_seed() -> None:
    packet = random_packet("household")
    engineer = SelfRefineEngineer()
    first = asyncio.run(engineer.propose(packet, 4, seed=3))
    again = asyncio.run(engineer.propose(packet, 4, seed=3))
    other = asyncio.run(engineer.propose(packet, 4, seed=4))
    assert [p.to_dict() for p in first] == [p.to_dict() for p in again]
    assert [p.meta["wording"] for p in first] != [p.meta["wording"] for p in other]
    many = asyncio.run(engineer.propose(packet, len(WORDINGS) + 2, seed=3))
    assert len(many) == len(WORDINGS) + 2 and len({p.meta["wording"] for p in many}) == len(WORDINGS)


def test_the_rule_ignores_the_evidence() -> None:
    """Different failure packets (different envs and failure codes) get the same rule."""
    engineer = SelfRefineEngineer()
    by_env = {
        env: asyncio.run(engineer.propose(random_packet(env), 2, seed=0)) for env in ("household", "db")
    }
    hooks = {env: [p.patch.hooks for p in props if p.patch] for env, props in by_env.items()}
    assert hooks["household"] == hooks["db"]


def test_reflection_message_reaches_the_agent_before_every_later_decision() -> None:
    record = episode("household", sloppy_household(), reflection_patch("household", 2), task=0, step_limit=6)
    fired = [i for i, s in enumerate(record.steps) if any(e["kind"] == "message" for e in s.effects)]
    assert fired == [1, 2, 3, 4, 5]
    assert all(s.effects[0]["text"] == WORDINGS[2] for s in record.steps[1:])
    assert not any(s.hook_errors for s in record.steps)
