"""``reharness experiment r1`` on a micro configuration: the main-table contract, resume and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from targets import ClumsySolver
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.experiments.r1 import METHODS
from reharness.runtime.agents import SCRIPTED_AGENTS

MICRO = [
    "--env", "household", "--agent", "clumsy", "--batches", "2", "--valid-batches", "0",
    "--test-batches", "1", "--batch-size", "6", "--max-steps", "12", "--size", "micro",
    "--sft-steps", "40", "--grpo-steps", "1", "--k", "2", "--max-new-tokens", "32",
    "--max-prompt-chars", "400", "--temperature", "0",
    "--transfer-agent", "clumsy-m", "--generalisation-seeds", "1", "--heldout-n", "8",
    "--grpo-temperature", "1.0", "--packets-per-step", "2",
]  # fmt: skip


def test_r1_prints_the_contract_and_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = [0]
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", lambda: ClumsySolver(calls=calls))
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy-m", lambda: ClumsySolver(calls=calls))
    result = CliRunner().invoke(app, ["experiment", "r1", *MICRO, "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "evaluate (test batches)" in result.stderr and " eta " in result.stderr  # the evaluation's bar
    data = json.loads(result.stdout)
    assert set(data) == {"rows", "average"} and set(data["average"]) == set(METHODS)
    rows = {r["method"]: r for r in data["rows"]}
    assert all(set(r) == {"method", "env", "success", "ci_low", "ci_high", "broken"} for r in data["rows"])
    assert all(r["ci_low"] <= r["success"] <= r["ci_high"] for r in data["rows"])
    none = rows["none"]
    assert none["broken"] == 0 and none["success"] < 1  # the clumsy target fails some test tasks
    assert rows["operators"]["success"] > none["success"]  # the teacher's snap patch rescues them
    # the micro engineers write repair programs (greedy) that rescue test tasks, like the teacher
    assert rows["sft"]["success"] > none["success"] and rows["grpo"]["success"] > none["success"]
    report = (tmp_path / "report.md").read_text()
    assert "| operators |" in report and (tmp_path / "success.png").is_file()
    saved = json.loads((tmp_path / "result.json").read_text())
    transfer = {r["method"]: r for r in saved["transfer"]}
    assert set(transfer) == set(METHODS) and transfer["operators"]["success"] > transfer["none"]["success"]
    general = saved["generalisation"]
    assert set(general) == {"operators", "sft", "grpo"} and general["operators"]["runs"] == 1
    assert general["operators"]["mean_delta"] > 0 and general["sft"]["mean_delta"] > 0
    saved_rows = {r["method"]: r for r in saved["rows"]}
    assert saved_rows["sft"]["valid_patches"] == saved_rows["grpo"]["valid_patches"] == 1
    assert saved["ablation"]["full"] == rows["grpo"]["success"] > saved["ablation"]["no patch"]
    assert "## Held-out generalisation" in report and "## Hook ablation" in report
    assert "groups with reward variance" in report and "train packets" in report  # GRPO's signal
    info = json.loads((tmp_path / "train" / "grpo" / "engineer.json").read_text())
    assert info["packet_stream"]["kind"] == "contested"
    assert 1 <= info["packets"] <= info["packet_stream"]["train_packets"]
    grpo = info["config"]
    assert grpo["temperature"] == 1.0 and grpo["packets_per_step"] == 2  # the r1 flags reach GRPO
    assert grpo["constrain"] is True and grpo["packets"] == "contested"  # the defaults
    records = (tmp_path / "eval.jsonl").read_text().splitlines()
    assert len(records) == len(METHODS)
    used = calls[0]
    again = CliRunner().invoke(app, ["experiment", "r1", *MICRO, "--out", str(tmp_path), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout) == data
    assert calls[0] == used  # everything was loaded: trained engineers, baselines, evaluations


def test_r1_bad_option_names_the_flag_and_the_help(tmp_path: Path) -> None:
    """A value the config rejects fails before any episode, naming the flag and ``--help``."""
    result = CliRunner().invoke(
        app, ["experiment", "r1", "--env", "household", "--batches", "0", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "--batches" in result.stderr and "greater than 0" in result.stderr
    assert "reharness experiment r1 --help" in result.stderr
    assert not (tmp_path / "train").exists()


def test_resuming_refuses_other_training_options_but_not_scheduling_ones(tmp_path: Path) -> None:
    from reharness.core.errors import ConfigError
    from reharness.experiments.r1 import R1Config, _check_same_experiment

    first = R1Config(envs=["household"], out=str(tmp_path))
    (tmp_path / "r1_config.json").write_text(json.dumps(first.model_dump(mode="json")), "utf-8")
    _check_same_experiment(tmp_path, first.model_copy(update={"batch_concurrency": 1, "concurrency": 4}))
    with pytest.raises(ConfigError, match="sft_steps=300, not 40"):
        _check_same_experiment(tmp_path, first.model_copy(update={"sft_steps": 40}))
    old = {k: v for k, v in first.model_dump(mode="json").items() if k != "batch_concurrency"}
    (tmp_path / "r1_config.json").write_text(json.dumps(old), "utf-8")  # written before the option existed
    _check_same_experiment(tmp_path, first.model_copy(update={"batch_concurrency": 2}))


def test_r1_grpo_defaults_sample_under_the_grammar_at_1_2_from_contested_packets() -> None:
    from reharness.experiments.r1 import R1Config

    config = R1Config(envs=["household"])
    assert (config.grpo_constrain, config.grpo_temperature, config.grpo_packets) == (True, 1.2, "contested")
    assert R1Config(envs=["household"], grpo_constrain=False).grpo_temperature == 0.7
    assert R1Config(envs=["household"], language="hooks").grpo_temperature == 0.7  # no grammar for hooks
    assert R1Config(envs=["household"], grpo_temperature=0.9).grpo_temperature == 0.9


def test_r1_refuses_to_resume_an_older_run_whose_grpo_trained_on_every_packet(tmp_path: Path) -> None:
    from reharness.core.errors import ConfigError
    from reharness.experiments.r1 import R1Config, run_r1

    old = R1Config(envs=["household"], out=str(tmp_path), grpo_constrain=False).model_dump(mode="json")
    del old["grpo_packets"]  # written before the option existed: GRPO sampled every train packet
    (tmp_path / "r1_config.json").write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="grpo_packets='all'") as err:
        run_r1(R1Config(envs=["household"], out=str(tmp_path), grpo_constrain=False))
    assert "--out" in str(err.value.hint)
