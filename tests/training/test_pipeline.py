"""The whole Harness-R1 training pipeline through the CLI, for real, on a micro configuration:
packets → SFT set → SFT → GRPO → ``reharness improve --engineer hf:…`` with the trained engineer.

The target is the clumsy household expert (registered as the scripted agent ``clumsy``), the teacher the
built-in ``operators``, the engineer the micro tiny engineer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from targets import ClumsySolver
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.runtime.agents import SCRIPTED_AGENTS
from reharness.training.data import read_records

MICRO = [
    "--env", "household", "--agent", "clumsy", "--batches", "3", "--valid-batches", "1", "--batch-size", "6",
    "--teacher-k", "2", "--max-steps", "12", "--size", "micro",
]  # fmt: skip


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_packets_sft_grpo_then_improve_with_the_trained_engineer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    out = tmp_path / "r1"
    code, stdout, stderr = _cli(
        "train", "engineer", *MICRO, "--stage", "sft", "--steps", "6", "--out", str(out), "--json"
    )
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert summary["data"]["packets"] == {"train": 3, "valid": 1} and summary["sft"]["stage"] == "sft"
    assert summary["data"]["sft_examples"]["train"] == summary["sft"]["examples"]["packets"] > 0
    assert summary["engineer"] == f"hf:{out / 'sft'}"
    for name in ("packets.parquet", "sft.parquet", "train_config.json", "batches.jsonl"):
        assert (out / "data" / name).is_file()
    assert json.loads((out / "sft" / "train_config.json").read_text())["steps"] == 6
    records = read_records(out / "data")
    code, stdout, stderr = _cli(
        "train", "engineer", *MICRO, "--stage", "grpo", "--k", "2", "--steps", "2", "--max-new-tokens", "48",
        "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    grpo = json.loads(stdout)["grpo"]
    assert grpo["packets"] == 3 and len(grpo["reward_curve"]) == 2 and grpo["timing"]["steps_timed"] == 2
    assert read_records(out / "data") == records  # the collection was complete: nothing reran
    assert len((out / "grpo" / "rewards.jsonl").read_text().splitlines()) == 4
    code, stdout, stderr = _cli(
        "improve", "--env", "household", "--agent", "clumsy", "--engineer", f"hf:{out / 'grpo'}",
        "--batch-size", "6", "--k", "2", "--eval-n", "6", "--max-steps", "12", "--out", str(tmp_path / "imp"),
        "--json",
    )  # fmt: skip
    assert code == 0, stderr
    contract = json.loads(stdout)
    assert len(contract["candidates"]) == 2
    proposals = (tmp_path / "imp" / "round-1" / "proposals.jsonl").read_text().splitlines()
    meta = json.loads(proposals[0])["meta"]
    assert meta["engineer"] == f"llm:hf:{out / 'grpo'}"
    assert meta["completion_tokens"] <= 48 * meta["attempts"]  # each try within the reply budget
    code, stdout, _ = _cli("train", "engineer", *MICRO, "--stage", "data", "--out", str(out), "--json")
    assert (
        code == 0 and json.loads(stdout)["data"] == summary["data"] and "engineer" not in json.loads(stdout)
    )
    code, _, stderr = _cli(
        "train", "engineer", *MICRO, "--batch-size", "5", "--stage", "data", "--out", str(out)
    )
    assert code == 2 and "collected with batch_size=6, not 5" in stderr  # one data dir, one collection


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "kitchen"], "unknown environment"),
        (["--env", "household", "--stage", "rl"], "unknown --stage"),
        (["--env", "household", "--batch-size", "0"], "--batch-size"),
        (["--env", "household", "--stage", "grpo", "--k", "1"], "--k"),
        (["--env", "household", "--stage", "grpo"], "no SFT engineer"),
    ],
)
def test_cli_errors_are_clear(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, stderr = _cli("train", "engineer", *args, "--out", str(tmp_path))
    assert code == 2 and message in stderr and "how to fix" in stderr
    assert not (tmp_path / "data").exists()  # nothing ran
