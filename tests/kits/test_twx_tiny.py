"""The TextWorldExpress tiny-agent recipe: it validates, its demos recover from every perturbation, and a
micro agent trains from it through the CLI like a built-in kit's."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from reharness.envs import make_env
from reharness.kits.twx.env import READ_ONLY, TwxEnv
from reharness.kits.twx.tiny import perturb
from reharness.models.tiny.config import recipe_for
from reharness.training.tiny.demos import render_demos

pytestmark = pytest.mark.usefixtures("need_twx")


def test_recipe_validates_and_fits_the_train_fold() -> None:
    recipe = recipe_for("twx-twc", "S")
    assert recipe.env == "twx-twc" and recipe.size == "S" and recipe.interventions
    assert recipe.batch_size == 4 and recipe.copy_warmup_steps > 0  # a kit replaces base fields
    assert recipe.num_demos <= 1000  # the official train fold has 1,000 seeds: demos cannot repeat a seed
    assert recipe_for("twx-twc", "micro").num_demos >= 1


def test_solver_plays_on_after_commands_that_change_nothing() -> None:
    env = make_env("twx-twc", split="train")
    assert isinstance(env, TwxEnv)
    try:
        env.reset(options={"task": 0})
        first = env.expert_action()
        for command in ("fly to the moon", "look around", "inventory"):
            env.step(command)
            assert env.expert_action() == first  # an invalid or read-only command is no step on the path
        while True:
            _, _, terminated, truncated, info = env.step(env.expert_action())
            if terminated or truncated:
                break
        assert info["success"]
    finally:
        env.close()


def test_perturbations_change_nothing() -> None:
    env = make_env("twx-twc", split="train")
    assert isinstance(env, TwxEnv)
    rng = random.Random(0)
    seen = 0
    try:
        for task in range(5):
            env.reset(options={"task": task})
            for _ in range(6):
                action = perturb(env, rng)
                valid = env.admissible_actions() or []
                if action is not None:
                    seen += 1
                    assert action not in valid or action in READ_ONLY
                env.step(env.expert_action())
    finally:
        env.close()
    assert seen >= 20


def test_demos_with_perturbations_and_interventions_all_win() -> None:
    recipe = recipe_for("twx-twc", "S")
    from reharness.training.tiny.interventions import InterventionRates

    rates = InterventionRates()
    demos, stats = render_demos(
        "twx-twc", 6, seed=1, perturb_prob=0.3, interventions=rates, repeat_prob=recipe.repeat_prob
    )
    assert stats.successes == stats.episodes == 6  # the solver recovers from every perturbation
    assert 0 < stats.supervised_turns < stats.turns
    texts = [m.content for d in demos for m in d.messages if m.role == "user"]
    assert any("[Harness]" in t or "not valid" in t.lower() for t in texts)  # interventions are rendered


def test_cli_trains_a_micro_twx_agent(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reharness.cli.agent_cmd import agent_app

    out = tmp_path / "twc-micro"
    args = ["train", "--env", "twx-twc", "--size", "micro", "--steps", "2", "--out", str(out), "--json"]
    result = CliRunner().invoke(agent_app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(payload["path"]) == out and (out / "config.json").is_file()
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["recipe"]["env"] == "twx-twc"


def test_an_installed_kits_tiny_agent_has_a_name(need_twx: None, tmp_path: Path, monkeypatch: Any) -> None:
    """``tiny:twx-twc-S`` names the kit's recipe (a kit from an entry point, not a built-in): it resolves, and
    a missing one names the command that trains it."""
    from typer.testing import CliRunner

    from reharness.cli.main import app
    from reharness.models.tiny.registry import parse_name

    assert parse_name("twx-twc-S") == ("twx-twc", "S")
    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path))
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--env",
            "twx-twc",
            "--agent",
            "tiny:twx-twc-S",
            "--no-train",
            "--n",
            "1",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2 and "reharness agent train --env twx-twc --size S" in result.output
