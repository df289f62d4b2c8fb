"""``export``, ``agent list`` and ``agent eval`` run as a user would: what they print and what they write."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.models.tiny.registry import is_model_dir

TINY = {f"{env}-{size}" for env in ("household", "shop", "db") for size in ("S", "M")} | {"apps-S", "code-S"}


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def test_export_writes_every_episode_and_step(tmp_path: Path) -> None:
    code, out = cli(
        "run", "--env", "household", "--agent", "random", "--n", "3", "--out", str(tmp_path), "--json"
    )
    assert code == 0
    run_dir = Path(json.loads(out)["out"])
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    code, out = cli("export", str(run_dir), "--dest", str(tmp_path / "parquet"))
    assert code == 0
    paths = [Path(p) for p in out.split()]
    assert paths == [tmp_path / "parquet" / "episodes.parquet", tmp_path / "parquet" / "steps.parquet"]
    episodes = pq.read_table(paths[0]).to_pylist()
    steps = pq.read_table(paths[1]).to_pylist()
    assert sorted((e["episode_index"], e["task_id"], e["score"]) for e in episodes) == sorted(
        (r["episode_index"], r["task_id"], r["score"]) for r in records
    )
    assert len(steps) == sum(len(r["steps"]) for r in records) == sum(r["num_steps"] for r in records)
    by_episode = {r["episode_index"]: [s["output"]["text"] for s in r["steps"]] for r in records}
    for s in steps:
        assert s["output_text"] == by_episode[s["episode_index"]][s["step"]]
    code, out = cli("export", str(run_dir))  # default: next to the run's JSONL
    assert code == 0 and [Path(p) for p in out.split()] == [
        run_dir / "episodes.parquet",
        run_dir / "steps.parquet",
    ]


def test_agent_list_names_every_tiny_agent_and_where_it_is() -> None:
    code, out = cli("agent", "list", "--json")
    assert code == 0
    infos = json.loads(out)
    assert {i["name"] for i in infos} == TINY
    for info in infos:
        assert info["env"] + "-" + info["size"] == info["name"]
        assert info["command"].startswith(f"reharness agent train --env {info['env']} --size {info['size']}")
        if info["shipped"]:
            assert is_model_dir(Path(info["path"])) and info["params"] > 0
    code, table = cli("agent", "list")
    assert code == 0 and all(name in table for name in TINY)


def test_agent_eval_reports_a_consistent_greedy_evaluation() -> None:
    code, out = cli("agent", "eval", "--agent", "db-S", "--n", "2", "--no-train", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert set(report) == {"env", "n", "success_rate", "failure_mix", "step_flags", "mean_steps", "seconds"}
    assert report["env"] == "db" and report["n"] == 2  # the env comes from the agent's name
    assert report["success_rate"] * 2 + sum(report["failure_mix"].values()) == 2
    assert report["mean_steps"] >= 1 and all(0 <= v <= 1 for v in report["step_flags"].values())
