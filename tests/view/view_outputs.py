"""Real small outputs for the viewer's tests, made once per session through the CLI a user runs.

- ``runs``: ``reharness run --env household`` with the ``solver`` (3 episodes, all succeed) and with
  ``random`` (3 episodes, all fail at the step limit), both under one ``--out`` folder;
- ``improve_dir``: ``reharness improve --engineer operators`` on a near-miss household agent (the expert,
  but with a seeded 60 % chance per step of a near-miss command the env rejects), whose failures the
  operators' snap-to-admissible patch rescues; so the paired view has rescued tasks and divergent steps;
- the pool and the training output are the real ones recorded under ``docs/results/``.

The fixtures live here, not in a ``conftest.py``, so that no second module named ``conftest`` shadows
``tests/training/conftest.py`` for tests that import from it; each test module imports them. A fixture's
output is made once per session even though two modules import it (:data:`_MADE`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.agents import SCRIPTED_AGENTS, Agent
from reharness.runtime.protocols import render_action

ROOT = Path(__file__).resolve().parents[2]
POOL = ROOT / "docs" / "results" / "pool-shop"
TRAINING = ROOT / "docs" / "results" / "policy-household" / "train-seed1"


class NearMissSolver(Agent):
    """The household expert that, with a seeded 60 % chance per step, writes a near-miss command."""

    policy_id = "near-miss"

    def __init__(self, env: Any = None, protocol: str = "text") -> None:
        self.env, self.protocol = env, protocol

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return NearMissSolver(env, protocol)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        action = str(self.env.expert_action())
        if random.Random(request.seed).random() < 0.6 and " " in action:
            verb, rest = action.split(" ", 1)
            action = "go to the " + rest[3:] if verb == "go" else f"{verb} the {rest}"
        return render_action(self.protocol, action, self.env)


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


_MADE: dict[str, Any] = {}


@pytest.fixture(scope="session", name="runs")
def runs_fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if "runs" in _MADE:
        return dict(_MADE["runs"])
    out = tmp_path_factory.mktemp("runs")
    made = {}
    for agent in ("solver", "random"):
        contract = json.loads(
            cli("run", "--env", "household", "--agent", agent, "--n", "3", "--out", str(out), "--json")
        )
        made[agent] = Path(contract["out"])
    made["out"] = out
    _MADE["runs"] = made
    return dict(made)


@pytest.fixture(scope="session", name="improve_dir")
def improve_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "improve" in _MADE:
        return Path(_MADE["improve"])
    out = tmp_path_factory.mktemp("improve")
    SCRIPTED_AGENTS["near-miss"] = NearMissSolver
    try:
        cli(
            "improve", "--env", "household", "--agent", "near-miss", "--engineer", "operators",
            "--batch-size", "6", "--k", "2", "--eval-n", "6", "--max-steps", "12",
            "--out", str(out), "--json",
        )  # fmt: skip
    finally:
        SCRIPTED_AGENTS.pop("near-miss", None)
    _MADE["improve"] = out
    return out
