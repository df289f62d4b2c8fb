"""A plain gymnasium text environment with no kit (``--env gym:ID``) through run, packet, improve, pool
evolve and train policy, on the generic detectors, operators and ctx."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit_cli import cli, cli_json

PLAIN = Path(__file__).resolve().parent / "plain"
GYM = "gym:keypad_env:plain_keypad/Keypad-v0"


def test_run_packet_improve_evolve_on_a_gym_id(tmp_path: Path) -> None:
    result = cli_json(tmp_path, [PLAIN], "run", "--env", GYM, "--agent", "random", "--n", "6")
    assert result["env"] == GYM and result["n"] == 6
    solver = cli_json(tmp_path, [PLAIN], "run", "--env", GYM, "--agent", "solver", "--n", "4")
    assert solver["success_rate"] == 1.0
    packet = cli_json(tmp_path, [PLAIN], "packet", str(tmp_path / result["out"]))
    assert packet["header"]["failures_found"] > 0
    improve = cli_json(
        tmp_path, [PLAIN], "improve", "--env", GYM, "--agent", "random", "--engineer", "operators",
        "--batch-size", "6", "--k", "2", "--eval-n", "6", "--out", "imp",
    )  # fmt: skip
    names = json.dumps(json.loads((tmp_path / "imp" / "candidates.json").read_text()))
    assert improve["candidates"] and any(
        op in names for op in ("loop_breaker", "snap_to_admissible", "goal_reminder")
    )
    pool = cli_json(
        tmp_path, [PLAIN], "pool", "evolve", "--env", GYM, "--agent", "random",
        "--directions", "loop_recovery", "--generations", "1", "--k", "2", "--batch-size", "6",
        "--valid-n", "6", "--out", "pool",
    )  # fmt: skip
    assert pool["env"] == GYM


def test_train_policy_on_a_gym_id(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    model = cli_json(tmp_path, [PLAIN], "agent", "train", "--env", GYM, "--size", "micro", "--out", "m")
    assert model["params"] > 0  # the generic recipe, trained on the env's own expert_action
    cli_json(
        tmp_path, [PLAIN], "pool", "build", "--env", GYM, "--agent", "hf:m",
        "--sibling", "loop_recovery=loop_breaker", "--no-profile", "--out", "pb",
    )  # fmt: skip
    trained = cli_json(
        tmp_path, [PLAIN], "train", "policy", "--env", GYM, "--agent", "hf:m", "--pool", "pb",
        "--rescue", "resample", "--steps", "1", "--k", "2", "--tasks-per-step", "1", "--micro-batches", "1",
        "--out", "tp",
    )  # fmt: skip
    assert trained["steps"] == 1


def test_what_cannot_be_inferred_is_a_clear_error(tmp_path: Path) -> None:
    proc = cli(tmp_path, [PLAIN], "run", "--env", "gym:CartPole-v1", "--agent", "random", "--n", "1")
    assert proc.returncode == 2 and "not a text environment" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli(tmp_path, [PLAIN], "run", "--env", "gym:keypad_env:plain_keypad/Nope-v0", "--n", "1")
    assert (
        proc.returncode == 2 and "gymnasium cannot make it" in proc.stderr and "Traceback" not in proc.stderr
    )
