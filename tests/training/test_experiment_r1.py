"""``reharness experiment r1`` on a micro configuration: the main-table contract, resume and the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from targets import ClumsySolver
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.experiments.r1 import CONTROLS, METHODS
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
    assert set(data) == {"rows", "average", "comparisons"}
    assert list(data["average"]) == [*METHODS, *CONTROLS]  # the controls are rows of the main table
    assert {"grpo-shuffled", "placebo", "placebo-text", "best-of-n"} == set(CONTROLS)
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
    effects = {(e["b"], e["env"]): e for e in saved["hook_effects"]}  # each hook's effect, paired per task
    for point in ("before_action", "after_feedback"):
        effect = effects[(f"without {point}", "household")]
        assert (
            abs(effect["delta"] - (saved["ablation"]["full"] - saved["ablation"][f"without {point}"])) < 1e-6
        )
        assert effect["ci_low"] <= effect["delta"] <= effect["ci_high"] and effect["n"] == 6
    assert "## Held-out generalisation" in report and "## Hook ablation" in report
    probe = saved["hint_probe"]["household"]  # the scripted target ignores messages: it rarely "follows"
    assert probe["hinted_steps"] > 0 and 0 <= probe["followed_frac"] <= 1 and "## Hint-following" in report
    assert "groups with reward variance" in report and "train packets" in report  # GRPO's signal
    info = json.loads((tmp_path / "train" / "grpo" / "engineer.json").read_text())
    assert info["packet_stream"]["kind"] == "contested"
    assert 1 <= info["packets"] <= info["packet_stream"]["train_packets"]
    grpo = info["config"]
    assert grpo["temperature"] == 1.0 and grpo["packets_per_step"] == 2  # the r1 flags reach GRPO
    assert grpo["constrain"] is True and grpo["packets"] == "contested"  # the defaults
    records = {r["method"]: r for r in map(json.loads, (tmp_path / "eval.jsonl").read_text().splitlines())}
    assert set(records) == {*METHODS, *CONTROLS}
    _check_controls(tmp_path, data, records, saved)
    used = calls[0]
    again = CliRunner().invoke(app, ["experiment", "r1", *MICRO, "--out", str(tmp_path), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout) == data
    assert calls[0] == used  # everything was loaded: trained engineers, baselines, evaluations


def _check_controls(
    out: Path, data: dict[str, Any], records: dict[str, dict[str, Any]], saved: dict[str, Any]
) -> None:
    """The three control rows and the paired comparisons of the micro run."""
    rows = {r["method"]: r for r in data["rows"]}
    # placebo: installed and rerun (scored by its rerun, not zeroed as degenerate); the scripted target is
    # deterministic and reads nothing of it, so it equals no patch task for task
    placebo = records["placebo"]
    assert placebo["valid"] and "scored by its rerun" in placebo["reason"]
    assert placebo["successes"] == records["none"]["successes"] and rows["placebo"]["broken"] == 0
    # shuffled rewards: its own GRPO stage, same compute, the loss saw permuted rewards
    shuffled = json.loads((out / "train" / "grpo-shuffled" / "engineer.json").read_text())
    assert shuffled["config"]["reward_control"] == "shuffled" and shuffled["config"]["steps"] == 1
    log = [
        json.loads(line)
        for line in (out / "train" / "grpo-shuffled" / "rewards.jsonl").read_text().splitlines()
    ]
    assert len(log) == 4 and sorted(e["reward"] for e in log) == sorted(e["delta"] for e in log)
    # best-of-N: N from GRPO's logged reruns over the test packets, chosen on a train batch
    budget = saved["controls"]["best_of_n"]
    reruns = [
        json.loads(line) for line in (out / "train" / "grpo" / "rewards.jsonl").read_text().splitlines()
    ]
    assert (
        budget["grpo_reruns"] == sum(e["status"] != "invalid" for e in reruns) and budget["test_packets"] == 1
    )
    assert budget["n"] == max(1, budget["grpo_reruns"]) and records["best-of-n"]["search"]["n"] == budget["n"]
    search = records["best-of-n"]["search"]
    assert len(search["train_deltas"]) == budget["n"] and search["train_packet"]
    assert rows["best-of-n"]["success"] > rows["none"]["success"]
    # paired comparisons: per env and on the average, the Δ of the rows, an ordering only outside the CI
    comparisons = {(c["a"], c["b"], c["env"]): c for c in data["comparisons"]}
    for a, b in (("grpo", "sft"), ("grpo", "operators"), ("grpo", "grpo-shuffled"), ("grpo", "best-of-n")):
        for env in ("household", "average"):
            c = comparisons[(a, b, env)]
            assert abs(c["delta"] - (rows[a]["success"] - rows[b]["success"])) < 1e-6 and c["n"] == 6
            assert c["ci_low"] <= c["delta"] <= c["ci_high"]
            assert c["verdict"] == (
                f"{a} > {b}" if c["ci_low"] > 0 else f"{a} < {b}" if c["ci_high"] < 0 else "tie"
            )
    assert comparisons[("placebo", "none", "household")]["verdict"] == "tie"
    # placebo-text: Self-Refine's shape with content-free text, measured like any patch (it shows text)
    assert records["placebo-text"]["valid"] and ("self-refine", "placebo-text", "average") in comparisons
    assert "## Paired comparisons" in (out / "report.md").read_text()


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
