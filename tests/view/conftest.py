"""Real small outputs for the viewer's tests, made once per session through the CLI a user runs.

- ``runs``: ``reharness run --env household`` with the ``solver`` (3 episodes, all succeed) and with
  ``random`` (3 episodes, all fail at the step limit), both under one ``--out`` folder;
- ``improve_dir``: ``reharness improve --engineer operators`` on a near-miss household agent (the expert,
  but with a seeded 60 % chance per step of a near-miss command the env rejects), whose failures the
  operators' snap-to-admissible patch rescues; so the paired view has rescued tasks and divergent steps;
- the pool and the training output are the real ones recorded under ``docs/results/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from view_outputs import NearMissSolver

from reharness.cli.main import app
from reharness.runtime.agents import SCRIPTED_AGENTS


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    made = {}
    for agent in ("solver", "random"):
        contract = json.loads(
            cli("run", "--env", "household", "--agent", agent, "--n", "3", "--out", str(out), "--json")
        )
        made[agent] = Path(contract["out"])
    made["out"] = out
    return made


@pytest.fixture(scope="session")
def improve_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
    return out
