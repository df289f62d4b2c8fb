"""The built-ins behave exactly as before their knowledge moved into kits: every digest recorded before the
move (``golden_digests.json``, written by ``golden.py``) is recomputed and compared.

The scripted and random agents run in CI; the tiny agents' cases (minutes) are marked slow."""

from __future__ import annotations

import json

import golden
import pytest

RECORDED = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))


def _plain(value: object) -> object:
    return json.loads(json.dumps(value, sort_keys=True))


def _cases() -> list[object]:
    out: list[object] = []
    for env, stem, agents in golden.CASES:
        for agent in agents:
            marks = [pytest.mark.slow] if agent.startswith("tiny:") else []
            out.append(pytest.param(env, stem, agent, marks=marks, id=f"{env}-{stem or 'base'}-{agent}"))
    return out


@pytest.mark.parametrize(("env", "stem", "agent"), _cases())
def test_case_matches_recorded(env: str, stem: str | None, agent: str) -> None:
    got = _plain(golden.case_digests(env, stem, (agent,)))
    assert isinstance(got, dict)
    assert got[agent] == RECORDED[f"{env}/{stem or 'base'}"][agent]


@pytest.mark.parametrize("env", ["household", "shop", "db", "code", "apps"])
def test_demos_and_recipes_match_recorded(env: str) -> None:
    assert golden.demo_digests(env) == RECORDED[f"demos/{env}"]


def test_r1_ctx_run_matches_recorded() -> None:
    assert golden.r1_digest() == RECORDED["r1/household"]
