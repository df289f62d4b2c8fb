"""``reharness show --failed / --code CODE / --task ID`` on real household runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.store.run_store import RunStore


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    made = {}
    for agent in ("solver", "random"):
        args = ["run", "--env", "household", "--agent", agent, "--n", "3", "--out", str(out), "--json"]
        made[agent] = Path(json.loads(CliRunner().invoke(app, args).stdout)["out"])
    return made


def show(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "400")  # rich folds nothing at this width
    result = CliRunner().invoke(app, ["show", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_failed_and_code_list_the_matching_episodes(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = show(monkeypatch, runs["random"], "--failed")
    assert code == 0 and "3 episodes match (failed)" in out
    tasks = [e.task_id for e in RunStore(runs["random"]).episodes()]
    assert all(t in out for t in tasks)
    code, out, _ = show(monkeypatch, runs["solver"], "--failed")
    assert code == 0 and "0 episodes match (failed)" in out and "household/" not in out.split("match")[-1]
    code, out, _ = show(monkeypatch, runs["random"], "--code", "step_limit", "--episodes", "2")
    assert code == 0 and "3 episodes match (code step_limit)" in out
    assert sum(t in out for t in tasks) == 2  # --episodes caps the listing
    code, out, _ = show(monkeypatch, runs["random"], "--code", "wrong_answer")
    assert code == 0 and "0 episodes match (code wrong_answer)" in out


def test_task_prints_one_episode_step_by_step(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    episode = RunStore(runs["solver"]).episodes()[1]
    code, out, _ = show(monkeypatch, runs["solver"], "--task", episode.task_id)
    assert code == 0 and f"task={episode.task_id}" in out and f"steps={episode.num_steps}" in out
    for step in episode.steps:
        assert f"parsed: {step.parsed_action}" in out
    code, by_index, _ = show(monkeypatch, runs["solver"], "--task", str(episode.episode_index))
    assert code == 0 and by_index == out


def test_bad_code_or_task_says_how_to_fix_it(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = show(monkeypatch, runs["random"], "--code", "bogus")
    assert code == 2 and "not a failure code" in err and "step_limit" in err
    code, _, err = show(monkeypatch, runs["random"], "--task", "nope")
    assert code == 2 and "no episode of task 'nope'" in err and "how to fix" in err
