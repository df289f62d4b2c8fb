"""`reharness run` stores failure codes, `reharness show` counts them, `reharness packet` prints packets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.failures import extract_packet, render_packet
from reharness.store.run_store import open_run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    args = ["run", "--env", "household", "--agent", "random", "--n", "3", "--out", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return Path(json.loads(result.stdout.strip().splitlines()[-1])["out"])


def test_run_stores_failure_codes(run_dir: Path) -> None:
    rows = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all("step_limit" in row["failure_codes"] for row in rows)


def test_show_prints_a_failure_code_table(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["show", str(run_dir), "--episodes", "3"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "failure codes (3 failed episodes)" in result.stdout
    assert "step_limit" in result.stdout and "ran out of steps" in result.stdout


def test_packet_command_prints_the_same_packet_as_the_library(run_dir: Path) -> None:
    store = open_run_dir(run_dir)
    expected = extract_packet(store.episodes(), run_meta=store.read_meta(), max_traces=2)
    runner = CliRunner()
    as_json = [runner.invoke(app, ["packet", str(run_dir), "--max-traces", "2", "--json"]) for _ in range(2)]
    assert all(r.exit_code == 0 for r in as_json)
    assert as_json[0].stdout == as_json[1].stdout == expected.to_json() + "\n"
    text = runner.invoke(app, ["packet", str(run_dir), "--max-traces", "2"])
    assert text.exit_code == 0 and text.stdout == render_packet(expected)
    lowest = runner.invoke(app, ["packet", str(run_dir), "--strategy", "lowest-reward", "--json"])
    assert json.loads(lowest.stdout)["header"]["strategy"] == "lowest_reward"


def test_packet_command_rejects_unknown_strategy(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["packet", str(run_dir), "--strategy", "best"])
    assert result.exit_code == 2
    assert "unknown packet strategy" in result.output and "round_robin" in result.output
