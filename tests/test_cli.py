"""The `reharness` command, run as a user would (subprocess), checking the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DBBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dbbench"
CONTRACT_KEYS = {
    "run_id",
    "env",
    "agent",
    "n",
    "success_rate",
    "mean_score",
    "mean_steps",
    "trajectory_digest",
    "out",
    "policy_errors",
    "env_errors",
    "retried_errors",
    "model_requests",
    "valid_replies",
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reharness", *args], capture_output=True, text=True, timeout=600
    )


def run_json(*args: str) -> dict:
    proc = cli("run", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("env", ["household", "shop", "db"])
def test_run_json_contract_and_digest(env: str, tmp_path: Path) -> None:
    first = run_json("--env", env, "--agent", "solver", "--n", "8", "--out", str(tmp_path / "a"))
    assert set(first) == CONTRACT_KEYS
    assert first["env"] == env and first["agent"] == "solver" and first["n"] == 8
    assert first["success_rate"] == 1.0 and first["mean_score"] == 1.0 and first["mean_steps"] > 1
    assert first["policy_errors"] == first["env_errors"] == first["retried_errors"] == 0
    assert first["valid_replies"] == first["model_requests"] == round(8 * first["mean_steps"])
    same = run_json("--env", env, "--agent", "solver", "--n", "8", "--out", str(tmp_path / "b"))
    assert same["trajectory_digest"] == first["trajectory_digest"]
    other = run_json(
        "--env", env, "--agent", "solver", "--n", "8", "--seed", "1", "--out", str(tmp_path / "c")
    )
    assert other["trajectory_digest"] != first["trajectory_digest"]
    tasks_a = {
        json.loads(x)["task_id"] for x in (Path(first["out"]) / "episodes.jsonl").read_text().splitlines()
    }
    tasks_c = {
        json.loads(x)["task_id"] for x in (Path(other["out"]) / "episodes.jsonl").read_text().splitlines()
    }
    assert tasks_a != tasks_c
    shown = cli("show", first["out"])
    assert shown.returncode == 0 and "by task type" in shown.stdout and "100.0%" in shown.stdout


def test_random_agent_and_resume_by_rerun(tmp_path: Path) -> None:
    args = ("--env", "household", "--agent", "random", "--n", "6", "--out", str(tmp_path))
    first = run_json(*args)
    assert first["success_rate"] == 0.0 and first["mean_steps"] == 50.0  # seeded: every walk hits the limit
    again = run_json(*args)
    assert again["trajectory_digest"] == first["trajectory_digest"] and again["run_id"] == first["run_id"]
    lines = (Path(first["out"]) / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 6


@pytest.mark.skipif(not DBBENCH.exists(), reason="shared DBBench data not present")
def test_gold_agent_on_real_dev_file(tmp_path: Path) -> None:
    result = run_json(
        "--env", "db", "--agent", "gold", "--data", str(DBBENCH / "dev.jsonl"), "--out", str(tmp_path)
    )
    assert result["n"] == 60 and result["success_rate"] == 1.0  # every reference solution passes its checker


def test_db_tool_calling_harness(tmp_path: Path) -> None:
    harness = Path(__file__).resolve().parents[1] / "src" / "reharness" / "kits" / "db" / "harness-fc.yaml"
    result = run_json(
        "--env", "db", "--agent", "solver", "--n", "5", "--harness", str(harness), "--out", str(tmp_path)
    )
    assert result["success_rate"] == 1.0
    episode = json.loads((Path(result["out"]) / "episodes.jsonl").read_text().splitlines()[0])
    assert episode["steps"][0]["output"]["tool_calls"], "the fc harness must speak in tool calls"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("run", "--env", "houshold", "--agent", "solver"), "did you mean 'household'"),
        (("run", "--env", "household", "--agent", "sovler"), "did you mean 'solver'"),
        (("run", "--env", "household", "--agent", "solver", "--split", "tset"), "did you mean 'test'"),
        (("run", "--env", "shop", "--agent", "solver", "--data", __file__), "--data loads real task files"),
        (("run", "--env", "household", "--agent", "gold", "--n", "1"), "gold agent needs"),
        (("run", "--env", "db", "--agent", "gold", "--data", "/nonexistent.jsonl"), "nonexistent"),
        (("show", "/nonexistent/run"), "not a run directory"),
    ],
)
def test_bad_input_gets_a_clear_error(args: tuple[str, ...], fragment: str, tmp_path: Path) -> None:
    proc = cli(*args, "--out", str(tmp_path)) if args[0] == "run" else cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_envs_lists_builtins() -> None:
    proc = cli("envs")
    assert proc.returncode == 0
    for name in ("household", "shop", "db", "reharness/DB-v0"):
        assert name in proc.stdout
