"""``pool build``: a pool of siblings the user names, through the real CLI, and its clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.core.errors import ConfigError, UnknownNameError
from reharness.pool import load_pool
from reharness.pool.build import build_pool, parse_sibling_spec
from reharness.pool.pool import PolicyRef
from reharness.pool.profile import load_profile


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_build_freezes_the_named_siblings_and_measures_their_profile(tmp_path: Path) -> None:
    out = tmp_path / "pool-db"
    code, stdout, stderr = _cli(
        "pool", "build", "--env", "db", "--agent", "solver",
        "--sibling", "error_feedback=sql_error_hint",
        "--sibling", "goal_tracking=answer_guard+empty_result_hint",
        "--valid-n", "4", "--concurrency", "4", "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0, stdout + stderr
    summary = json.loads(stdout)
    assert [s["direction"] for s in summary["siblings"]] == ["error_feedback", "goal_tracking"]
    pool = load_pool(out)  # every hash checked on load
    assert pool.env == "db" and [s.id for s in pool.siblings] == [s["id"] for s in summary["siblings"]]
    names = [op["name"] for op in pool.siblings[1].patches[0].metadata["operators"]]
    assert sorted(names) == ["answer_guard", "empty_result_hint"]
    assert all(s.provenance.engineer == "manual" for s in pool.siblings)
    profile = load_profile(pool)
    assert profile.split == "valid" and len(profile.tasks) == 4 and profile.policy.spec == "solver"
    assert set(profile.cells) == {s.id for s in pool.siblings}


def test_harness_file_is_h0_of_the_pool_and_of_its_profile(tmp_path: Path) -> None:
    """--harness: H0 is the file's harness (here a step limit and a reply budget), every sibling is that H0
    plus its patch, and the profile's episodes ran under it."""
    harness = tmp_path / "short.yaml"
    harness.write_text("step_limit: 3\nsampling:\n  max_tokens: 61\n")
    out = tmp_path / "pool"
    code, stdout, stderr = _cli(
        "pool", "build", "--env", "household", "--agent", "random", "--harness", str(harness),
        "--sibling", "loop_recovery=loop_breaker", "--valid-n", "3", "--concurrency", "3", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stdout + stderr
    pool = load_pool(out)
    assert pool.h0.step_limit == 3 and pool.h0.sampling.max_tokens == 61
    assert pool.siblings[0].base == pool.h0
    runs = [json.loads(p.read_text()) for p in (out / "build" / "runs").glob("**/run.json")]
    assert runs and all(r["harness"]["config"]["step_limit"] == 3 for r in runs)
    steps = [
        len(json.loads(line)["steps"])
        for p in (out / "build" / "runs").glob("**/episodes.jsonl")
        for line in p.read_text().splitlines()
    ]
    assert steps and max(steps) <= 3


def test_a_patch_file_names_a_sibling_too(tmp_path: Path) -> None:
    from reharness.engineer.operators.registry import get_operator

    patch = get_operator("loop_breaker").build(None, "household")
    file = tmp_path / "loop.yaml"
    patch.dump(file)
    pool = build_pool("household", [f"loop_recovery={file}"], PolicyRef(spec="solver"))
    assert pool.siblings[0].patches[0].identity == patch.identity


@pytest.mark.parametrize(
    ("spec", "error", "says"),
    [
        ("sql_error_hint", ConfigError, "is not DIRECTION=ITEMS"),
        ("error_feedback=", ConfigError, "is not DIRECTION=ITEMS"),
        ("error_feedbak=sql_error_hint", UnknownNameError, "unknown direction"),
        ("error_feedback=sql_eror_hint", UnknownNameError, "unknown repair operator"),
        ("action_validity=snap_to_admissible", ConfigError, "do not apply to env 'db'"),
        ("error_feedback=missing/patch.yaml", ConfigError, "does not exist"),
    ],
)
def test_bad_sibling_specs_say_what_is_wrong(spec: str, error: type, says: str) -> None:
    with pytest.raises(error, match=says):
        build_pool("db", [spec], PolicyRef(spec="solver"))


def test_the_same_sibling_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="repeats an earlier sibling"):
        build_pool("db", ["error_feedback=sql_guard", "goal_tracking=sql_guard"], PolicyRef(spec="solver"))
    assert parse_sibling_spec(" a = b ") == ("a", "b")


def test_the_cli_refuses_a_build_without_siblings(tmp_path: Path) -> None:
    code, stdout, stderr = _cli(
        "pool", "build", "--env", "db", "--agent", "solver", "--out", str(tmp_path / "p")
    )
    assert code != 0 and "--sibling" in stdout + stderr
