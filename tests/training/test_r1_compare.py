"""Paired comparisons of r1's methods: per task on shared test batches, an ordering only outside the CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reharness.experiments.r1_compare import comparisons, pooled, summary


def _records(outcomes: dict[str, list[float]], env: str = "household", seed: int = 7) -> list[dict[str, Any]]:
    """One test batch per method, ``outcomes`` per task in the baseline's order."""
    return [
        {"key": f"{env}/0/{m}", "env": env, "batch": 0, "method": m, "seed": seed, "successes": v}
        for m, v in outcomes.items()
    ]


def test_a_difference_on_many_tasks_is_an_ordering_a_few_tasks_are_a_tie() -> None:
    many = _records({"grpo": [1.0] * 30 + [0.0] * 30, "sft": [0.0] * 60})
    (env, average) = comparisons(many, ["household"], pairs=(("grpo", "sft"),))
    assert env["env"] == "household" and average["env"] == "average"
    assert env["delta"] == 0.5 and env["ci_low"] > 0 and env["verdict"] == "grpo > sft" and env["n"] == 60
    few = _records({"grpo": [1.0, 0.0] + [0.0] * 58, "sft": [0.0] * 60})
    assert comparisons(few, ["household"], pairs=(("grpo", "sft"),))[0]["verdict"] == "tie"
    worse = _records({"grpo": [0.0] * 60, "sft": [1.0] * 20 + [0.0] * 40})
    assert comparisons(worse, ["household"], pairs=(("grpo", "sft"),))[0]["verdict"] == "grpo < sft"


def test_pairs_are_per_task_so_the_same_rate_on_other_tasks_is_not_a_tie() -> None:
    """Equal success rates, disjoint tasks: Δ 0 with a wide interval; identical outcomes: a zero interval."""
    records = _records({"grpo": [1.0, 0.0] * 20, "sft": [0.0, 1.0] * 20, "none": [1.0, 0.0] * 20})
    swapped, same = comparisons(records, ["household"], pairs=(("grpo", "sft"), ("grpo", "none")))[::2]
    assert swapped["delta"] == 0 and swapped["ci_low"] < 0 < swapped["ci_high"]
    assert (same["ci_low"], same["ci_high"]) == (0.0, 0.0)


def test_pooled_seeds_average_each_task_and_refuse_other_test_batches(tmp_path: Path) -> None:
    one = _records({"grpo": [1.0] * 10 + [0.0] * 10, "sft": [0.0] * 20})
    two = _records({"grpo": [0.0] * 20, "sft": [0.0] * 20})
    (env, _) = pooled([one, two], ["household"], pairs=(("grpo", "sft"),))
    assert env["delta"] == 0.25 and env["n"] == 20  # per task, the mean over the two runs
    with pytest.raises(ValueError, match="--test-seed"):
        pooled([one, _records({"grpo": [0.0] * 20, "sft": [0.0] * 20}, seed=8)], ["household"])
    for name, records in (("a", one), ("b", two)):  # the script reads only the stored files
        (tmp_path / name).mkdir()
        (tmp_path / name / "r1_config.json").write_text(json.dumps({"envs": ["household"]}))
        (tmp_path / name / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    text = "\n".join(summary([tmp_path / "a", tmp_path / "b"]))
    assert "| grpo | 25.0 | 25.0 |" in text and "| grpo − sft | household | +25.0" in text


def test_the_average_pairs_every_environments_tasks_together() -> None:
    records = _records({"grpo": [1.0] * 10, "sft": [0.0] * 10}, env="household")
    records += _records({"grpo": [0.0] * 10, "sft": [0.0] * 10}, env="shop")
    rows = {c["env"]: c for c in comparisons(records, ["household", "shop"], pairs=(("grpo", "sft"),))}
    assert rows["household"]["delta"] == 1.0 and rows["shop"]["verdict"] == "tie"
    assert rows["average"]["delta"] == 0.5 and rows["average"]["n"] == 20


def test_the_command_names_a_missing_run_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reharness.experiments.r1_compare import main

    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "nowhere")])
    assert stop.value.code == 2 and "nowhere" in capsys.readouterr().err
