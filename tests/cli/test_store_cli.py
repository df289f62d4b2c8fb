"""What the store does with a damaged or unusual run directory, seen through ``reharness run`` and ``show``.

Defined behaviour, checked here:

- ``run --overwrite`` discards the finished episodes and reruns every one (same trajectories, same digest);
  without it a rerun resumes and runs nothing that finished.
- A corrupt line in the *middle* of ``episodes.jsonl`` (not a torn last line, which is cut off on resume)
  is never skipped or rewritten silently: ``run`` and ``show`` refuse with exit 2, naming
  ``episodes.jsonl:LINE``, and leave the file as it was; ``run --overwrite`` is the way out.
- Two records with the same episode index: the last one wins, in the JSONL reader and in the index alike,
  and a resume runs nothing again.
- ``index.sqlite`` is derived: deleted, it is rebuilt from the JSONL by the next run of the same command;
  corrupt, the command says so and how to rebuild it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import typer.rich_utils
from typer.testing import CliRunner

from reharness.cli.main import app

N = 4


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def run(out: Path, *extra: str) -> tuple[int, dict, str]:
    code, stdout, stderr = cli("run", "--env", "db", "--n", str(N), "--out", str(out), "--json", *extra)
    return code, json.loads(stdout) if code == 0 else {}, stderr


def index_rows(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "index.sqlite") as db:
        return db.execute(
            "SELECT episode_index, task_id, success, score FROM episodes ORDER BY episode_index"
        ).fetchall()


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 400)


@pytest.fixture
def finished(tmp_path: Path) -> tuple[Path, dict]:
    code, summary, _ = run(tmp_path)
    assert code == 0 and summary["n"] == N and summary["success_rate"] == 1.0
    return tmp_path, summary


def test_rerun_resumes_and_overwrite_reruns_everything(finished: tuple[Path, dict]) -> None:
    out, first = finished
    jsonl = Path(first["out"]) / "episodes.jsonl"
    original = jsonl.read_bytes()
    code, again, stderr = run(out)
    assert code == 0 and jsonl.read_bytes() == original and f"resuming: {N}/{N}" in stderr
    # overwrite: a doctored record is gone, every episode is run again with the same result
    lines = original.decode().splitlines(keepends=True)
    doctored = json.loads(lines[0]) | {"success": False, "score": 0.0}
    jsonl.write_text(json.dumps(doctored) + "\n" + "".join(lines[1:]))
    code, fresh, stderr = run(out, "--overwrite")
    assert code == 0 and "resuming" not in stderr
    assert fresh["trajectory_digest"] == first["trajectory_digest"] and fresh["success_rate"] == 1.0
    records = [json.loads(x) for x in jsonl.read_text().splitlines()]
    assert sorted(r["episode_index"] for r in records) == list(range(N)) and all(
        r["success"] for r in records
    )
    assert [row[2] for row in index_rows(out)] == [1] * N


def test_a_corrupt_middle_line_is_refused_not_skipped(finished: tuple[Path, dict]) -> None:
    out, first = finished
    jsonl = Path(first["out"]) / "episodes.jsonl"
    lines = jsonl.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:60] + "\n"  # line 2 cut short, but the file still ends in a newline
    damaged = "".join(lines)
    jsonl.write_text(damaged)
    for args in (("run", "--env", "db", "--n", str(N), "--out", str(out)), ("show", first["out"])):
        code, stdout, stderr = cli(*args)
        assert code == 2 and "Traceback" not in stderr, stderr
        assert f"{jsonl}:2 is not a valid episode record" in stderr
        assert jsonl.read_text() == damaged  # nothing repaired or dropped behind the user's back
    code, fresh, _ = run(out, "--overwrite")
    assert code == 0 and fresh["trajectory_digest"] == first["trajectory_digest"]


def test_a_torn_last_line_is_cut_and_rerun(finished: tuple[Path, dict]) -> None:
    out, first = finished
    jsonl = Path(first["out"]) / "episodes.jsonl"
    lines = jsonl.read_text().splitlines(keepends=True)
    jsonl.write_text("".join(lines[:-1]) + lines[-1][:80])  # a writer killed mid-line
    code, again, stderr = run(out)
    assert code == 0 and f"resuming: {N - 1}/{N}" in stderr
    assert (
        again["trajectory_digest"] == first["trajectory_digest"] and len(jsonl.read_text().splitlines()) == N
    )


def test_duplicate_episode_indices_the_last_record_wins(finished: tuple[Path, dict]) -> None:
    out, first = finished
    jsonl = Path(first["out"]) / "episodes.jsonl"
    records = [json.loads(x) for x in jsonl.read_text().splitlines()]
    zero = next(r for r in records if r["episode_index"] == 0)
    later = zero | {"success": False, "score": 0.25}
    with jsonl.open("a") as fh:
        fh.write(json.dumps(later) + "\n")
    code, again, stderr = run(out)
    assert code == 0 and f"resuming: {N}/{N}" in stderr  # nothing ran again
    assert len(jsonl.read_text().splitlines()) == N + 1
    assert again["n"] == N and again["success_rate"] == (N - 1) / N and again["mean_score"] == (N - 0.75) / N
    assert index_rows(out)[0] == (0, zero["task_id"], 0, 0.25)  # the index agrees with the reader
    code, stdout, _ = cli("show", first["out"])
    assert code == 0 and f"finished {N}/{N}" in " ".join(stdout.split())


def test_the_index_is_rebuilt_from_the_jsonl(finished: tuple[Path, dict]) -> None:
    out, first = finished
    jsonl = Path(first["out"]) / "episodes.jsonl"
    expected = sorted(
        (r["episode_index"], r["task_id"], int(r["success"]), r["score"])
        for r in map(json.loads, jsonl.read_text().splitlines())
    )
    assert index_rows(out) == expected
    original = jsonl.read_bytes()
    (out / "index.sqlite").unlink()
    code, again, stderr = run(out)
    assert code == 0 and f"resuming: {N}/{N}" in stderr and jsonl.read_bytes() == original
    assert index_rows(out) == expected
    with sqlite3.connect(out / "index.sqlite") as db:
        assert db.execute("SELECT run_id, n FROM runs").fetchall() == [(first["run_id"], N)]
    (out / "index.sqlite").write_bytes(b"not a database, a user's stray file" * 100)
    code, _, stderr = run(out)
    assert code == 2 and "Traceback" not in stderr
    assert "could not be read" in stderr and "delete OUT/index.sqlite and rerun" in stderr
    (out / "index.sqlite").unlink()
    code, _, _ = run(out)
    assert code == 0 and index_rows(out) == expected
