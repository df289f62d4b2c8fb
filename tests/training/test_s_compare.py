"""``experiment s-compare``: one arm of two stored ``experiment s`` runs (an ablation) compared on their
shared test tasks, paired per task, from the stored files only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from s_runs import OTHER_ENV, STORED_ENV, stored_run
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.core.errors import DataError
from reharness.experiments.s_compare import compare

PAIRS = [[f"t{i}", i] for i in range(40)]
HALF = [float(i % 2) for i in range(40)]  # the odd tasks succeed
ZEROS = [0.0] * 40
TARGETS = ["invalid_action", "premature_answer"]  # premature_answer occurs in no episode


def _ablation(tmp_path: Path) -> tuple[Path, Path]:
    """Run A (mask) and run B (executed) of one seed: B's router wins every task A's wins and the even tasks
    below 20; B's router episodes carry the targeted code on none of the tasks where A's carry it on all."""
    better = [1.0 if i % 2 or i < 20 else 0.0 for i in range(40)]
    a = stored_run(
        tmp_path / "mask", 0, {"start": ZEROS, "router": HALF}, PAIRS, env=STORED_ENV,
        codes={"router": [["invalid_action"]] * 40}, target_codes=TARGETS,
        rescues={"router": {"tried": 8, "succeeded": 2}},
    )  # fmt: skip
    b = stored_run(
        tmp_path / "executed", 0, {"start": ZEROS, "router": better}, PAIRS, env=STORED_ENV,
        codes={"router": [["wrong_answer"]] * 40}, target_codes=TARGETS,
        options={"rewritten_turns": "executed"}, rescues={"router": {"tried": 8, "succeeded": 5}},
    )  # fmt: skip
    return a, b


def test_an_ablation_is_paired_per_task_and_names_the_option_it_changes(tmp_path: Path) -> None:
    a, b = _ablation(tmp_path)
    result = compare(a, "router", b)
    assert result["n"] == 40 and result["a"]["key"] == result["b"]["key"] == f"{STORED_ENV}/router"
    assert (result["a"]["success"], result["b"]["success"]) == (0.5, 0.75)
    success = result["success"]
    assert success["delta"] == 0.25 and success["low"] > 0 and success["verdict"] == "better"
    # the codes: every A episode has the targeted one, no B episode: a lower rate is "fewer", not "worse"
    assert (result["a"]["target_code_rate"], result["b"]["target_code_rate"]) == (1.0, 0.0)
    assert result["target_code_rate"]["delta"] == -1.0 and result["target_code_rate"]["verdict"] == "fewer"
    # each targeted code that occurs, on its own (wrong_answer is not targeted, premature_answer never occurs)
    assert [(c["code"], c["a"], c["b"], c["delta"], c["verdict"]) for c in result["codes"]] == [
        ("invalid_action", 1.0, 0.0, -1.0, "fewer")
    ]
    assert result["differs"] == {"rewritten_turns": ["mask", "executed"]}  # out is where, not what
    assert result["a"]["rescues"] == {"tried": 8, "succeeded": 2}
    # the same run against itself, arm against arm: start vs router of A
    own = compare(a, "start", a, "router")
    assert own["differs"] == {} and own["success"]["delta"] == 0.5


def test_equal_arms_tie_and_a_run_older_than_an_option_does_not_differ_in_it(tmp_path: Path) -> None:
    a = stored_run(tmp_path / "a", 0, {"router": HALF}, PAIRS, env=STORED_ENV)
    b = stored_run(tmp_path / "b", 1, {"router": HALF[::-1]}, PAIRS, env=STORED_ENV)  # even tasks succeed
    config = json.loads((b / "s_config.json").read_text())
    del config["unseen_tasks"]  # written before the option existed: its default applies
    (b / "s_config.json").write_text(json.dumps(config))
    result = compare(a, "router", b)
    assert result["success"]["delta"] == 0.0 and result["success"]["verdict"] == "tie"
    assert result["differs"] == {"seed": [0, 1]}


def test_arms_that_cannot_be_paired_are_refused(tmp_path: Path) -> None:
    a, b = _ablation(tmp_path)
    other_tasks = stored_run(tmp_path / "c", 0, {"router": HALF}, PAIRS[::-1], env=STORED_ENV)
    with pytest.raises(DataError, match="different test tasks"):
        compare(a, "router", other_tasks)
    with pytest.raises(DataError, match=f"no evaluated arm '{STORED_ENV}/vote'") as error:
        compare(a, "vote", b)
    assert f"{STORED_ENV}/router, {STORED_ENV}/start" in str(error.value.hint)
    other_codes = stored_run(
        tmp_path / "d", 0, {"router": HALF}, PAIRS, env=STORED_ENV, target_codes=["format_error"]
    )  # another pool's siblings target other codes: success compares, codes do not
    mixed = compare(a, "router", other_codes)
    assert mixed["target_code_rate"] is None and mixed["codes"] == [] and mixed["success"]["verdict"] == "tie"
    elsewhere = stored_run(tmp_path / "e", 0, {"router": HALF}, PAIRS, env=OTHER_ENV)  # same tasks, other env
    with pytest.raises(DataError, match=f"holds {STORED_ENV} and .* holds {OTHER_ENV}"):
        compare(a, "router", elsewhere)
    (b / "eval.jsonl").unlink()
    with pytest.raises(DataError, match="not a finished experiment s run"):
        compare(a, "router", b)


def test_cli_prints_the_comparison_and_its_json(tmp_path: Path) -> None:
    a, b = _ablation(tmp_path)
    args = ["experiment", "s-compare", str(a), str(b), "--method", "router"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == compare(a, "router", b)
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "+25.0 [" in shown.stdout and "rewritten_turns: 'mask' → 'executed'" in shown.stdout
    assert "2/8" in shown.stdout and "5/8" in shown.stdout and "invalid_action" in shown.stdout
    bad = CliRunner().invoke(app, [*args[:-1], "vote"])
    assert bad.exit_code != 0 and f"its arms: {STORED_ENV}/router, {STORED_ENV}/start" in bad.output


def test_the_report_says_more_or_fewer_of_a_failure_code_never_better_or_worse() -> None:
    from reharness.experiments.s_config import SConfig, SResult, SRow
    from reharness.experiments.s_evidence import comparison_lines, target_lines

    row = {"env": STORED_ENV, "success": 0.3, "ci_low": 0.2, "ci_high": 0.4, "rollouts": 0}
    rows = [
        SRow(method="none", **row, target_code_rate=0.6, target_delta=0.2, target_delta_low=0.1,
             target_delta_high=0.3, vs={"resample": [0.1, 0.05, 0.15]}),
        SRow(method="router", **row, target_code_rate=0.2, target_delta=-0.2, target_delta_low=-0.3,
             target_delta_high=-0.1),
    ]  # fmt: skip
    result = SResult(config=SConfig(envs=[STORED_ENV]), rows=rows, rank1=[], average={})
    lines = target_lines(result)
    assert f"| {STORED_ENV} | none | 60.0 | +20.0 [+10.0, +30.0] more |" in lines
    assert f"| {STORED_ENV} | router | 20.0 | -20.0 [-30.0, -10.0] fewer |" in lines
    # success keeps better / worse
    assert f"| {STORED_ENV} | none | 30.0 | - | +10.0 [+5.0, +15.0] better |" in comparison_lines(result)
