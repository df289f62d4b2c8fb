"""``pool evolve``, ``pool eval`` and ``pool reanchor`` through the real CLI (typer's runner, in-process, so
the test's scripted target can be registered as an agent name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import TypoSolver
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.pool import load_pool
from reharness.pool.profile import load_profile
from reharness.runtime.agents import SCRIPTED_AGENTS


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    SCRIPTED_AGENTS["typo-solver"] = TypoSolver
    out = tmp_path_factory.mktemp("cli") / "pool"
    code, stdout, stderr = _cli(
        "pool", "evolve", "--env", "household", "--agent", "typo-solver", "--directions",
        "action_validity,loop_recovery", "--batch-size", "12", "--valid-n", "30", "--generations", "1",
        "--k", "2", "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0, stdout + stderr
    summary = json.loads(stdout)
    assert [s["direction"] for s in summary["siblings"]] == ["action_validity"]
    assert summary["coverage"] == summary["h0_valid_failures"] > 2
    yield out
    SCRIPTED_AGENTS.pop("typo-solver", None)


def test_evolve_writes_a_loadable_pool_with_its_profile(pool_dir: Path) -> None:
    pool = load_pool(pool_dir)
    profile = load_profile(pool)
    assert profile.split == "valid" and len(profile.tasks) == 30
    assert profile.policy.spec == "typo-solver"
    assert (pool_dir / "report.md").is_file() and (pool_dir / "coverage.png").is_file()


def test_eval_rank1_routes_the_garbled_task_types_to_the_sibling(pool_dir: Path) -> None:
    code, stdout, stderr = _cli(
        "pool", "eval", str(pool_dir), "--agent", "typo-solver", "--split", "test", "--n", "16", "--json"
    )
    assert code == 0, stdout + stderr
    result = json.loads(stdout)
    h0, sibling = result["rows"]
    assert h0["harness"] == "H0" and sibling["direction"] == "action_validity"
    assert h0["success"] < 1.0 and sibling["success"] == 1.0 and sibling["broken"] == 0
    rank1 = result["rank1"]
    # the sibling broke nothing on valid and rescued the garbled types, so its pool-wide gain is positive and
    # the types it left unchanged follow it too (the per-type rule alone: tests/pool/test_router.py)
    assert rank1["rollouts"] == 16 and rank1["routing"] == {sibling["id"]: 16}
    assert rank1["success"] == result["oracle"]["success"] == 1.0 and rank1["broken"] == 0
    assert result["oracle"]["coverage"] == 1.0 and result["oracle"]["rollouts"] == 32
    clusters = {c["cluster"]: c for c in result["clusters"]}
    assert clusters["any failure"]["h0_failures"] == result["oracle"]["h0_failures"]
    assert (
        clusters["any failure"]["oracle"]
        == clusters["action_validity"]["oracle"]
        == result["oracle"]["covered"]
    )
    assert clusters["goal_tracking"]["h0_failures"] == 0  # listed although the pool was not evolved along it
    assert (pool_dir / "eval" / "test-n16-seed0-validation.json").is_file()
    code, text, _ = _cli(
        "pool", "eval", str(pool_dir), "--agent", "typo-solver", "--split", "test", "--n", "16"
    )
    assert code == 0 and "rank1" in text and "oracle" in text


def test_rank1_prior_zero_routes_by_task_type_alone(pool_dir: Path, tmp_path: Path) -> None:
    args = ("--env", "household", "--agent", "typo-solver", "--split", "test", "--n", "16")
    code, stdout, stderr = _cli(
        "pool", "eval", str(pool_dir), "--agent", "typo-solver", "--n", "16", "--rank1-prior", "0", "--json"
    )
    assert code == 0, stderr
    rank1 = json.loads(stdout)["rank1"]
    # per-type evidence only: the types the sibling rescued nothing on during validation stay in H0
    assert rank1["routing"]["H0"] > 0 and rank1["success"] == 1.0 and rank1["broken"] == 0
    assert (pool_dir / "eval" / "test-n16-seed0-validation-prior0.json").is_file()
    code, stdout, stderr = _cli(
        "run", *args, "--pool", str(pool_dir), "--rank1-prior", "0", "--out", str(tmp_path), "--json"
    )
    assert code == 0, stdout + stderr
    assert json.loads(stdout)["routing"] == rank1["routing"]
    code, _, stderr = _cli(
        "run", *args, "--pool", str(pool_dir), "--rank1-prior", "-1", "--out", str(tmp_path)
    )
    assert code == 2 and "rank1-prior" in stderr


def test_reanchor_changes_the_profile_policy(pool_dir: Path) -> None:
    before = load_profile(load_pool(pool_dir)).policy_hash
    code, stdout, stderr = _cli("pool", "reanchor", str(pool_dir), "--agent", "solver", "--n", "8", "--json")
    assert code == 0, stdout + stderr
    summary = json.loads(stdout)
    after = load_profile(load_pool(pool_dir))
    assert summary["previous_policy_hash"] == before != after.policy_hash == summary["policy_hash"]
    assert after.policy.spec == "solver" and len(after.tasks) == 8
    assert (summary["temperature"], summary["samples"]) == (0.0, 1) == (after.temperature, after.samples)
    code, _, _ = _cli("pool", "show", str(pool_dir))
    assert code == 0
    # at the rollout temperature, two passes: what train policy's re-anchoring measures, recorded as such
    args = ("pool", "reanchor", str(pool_dir), "--agent", "solver", "--n", "8")
    code, stdout, stderr = _cli(*args, "--temperature", "1.0", "--samples", "2", "--json")
    assert code == 0, stdout + stderr
    sampled = load_profile(load_pool(pool_dir))
    assert (json.loads(stdout)["temperature"], sampled.temperature, sampled.samples) == (1.0, 1.0, 2)
    h0_attempts = sum(cell.attempts for cell in sampled.h0.values())
    assert h0_attempts == 2 * sum(cell.attempts for cell in after.h0.values()) == 16  # both passes counted
    code, stdout, err = _cli(*args, "--temperature", "1.0")  # the batches drawn as they run
    assert code == 0 and "/8" in err, stdout + err
    code, _, err = _cli(*args, "--samples", "2")
    assert code == 2 and "--samples needs --temperature" in err
    code, _, err = _cli(*args, "--temperature", "1.0", "--executor", "ray")
    assert code == 2 and "--executor local" in err


def test_pool_commands_refuse_bad_input(tmp_path: Path) -> None:
    code, _, err = _cli("pool", "eval", str(tmp_path / "none"), "--agent", "solver")
    assert code == 2 and "does not exist" in err and "Traceback" not in err
    file = tmp_path / "f"
    file.write_text("x")
    code, _, err = _cli("pool", "evolve", "--env", "household", "--agent", "solver", "--out", str(file))
    assert code == 2 and "not a directory" in " ".join(err.split())
    code, _, err = _cli("pool", "evolve", "--env", "household", "--agent", "solver", "--size", "0")
    assert code == 2 and "size" in err


def test_run_routed_by_rank1_matches_pool_eval(pool_dir: Path, tmp_path: Path) -> None:
    args = ("--env", "household", "--agent", "typo-solver", "--split", "test", "--n", "16")
    code, stdout, stderr = _cli(
        "pool", "eval", str(pool_dir), "--agent", "typo-solver", "--n", "16", "--json"
    )
    assert code == 0, stderr
    evaluated = json.loads(stdout)
    code, stdout, stderr = _cli("run", *args, "--pool", str(pool_dir), "--out", str(tmp_path), "--json")
    assert code == 0, stdout + stderr
    routed = json.loads(stdout)
    assert routed["route"] == "rank1" and routed["rollouts"] == 16
    assert routed["success_rate"] == evaluated["rank1"]["success"]
    assert routed["routing"] == evaluated["rank1"]["routing"]
    # every episode record names the harness it ran under
    pool = load_pool(pool_dir)
    from reharness.runtime import Harness

    allowed = {Harness(pool.h0).identity} | {s.harness().identity for s in pool.siblings}
    lines = (Path(routed["out"]) / "episodes.jsonl").read_text().splitlines()
    assert {json.loads(line)["harness_id"] for line in lines} <= allowed
    code, stdout, _ = _cli(
        "run", *args, "--pool", str(pool_dir), "--route", "oracle", "--out", str(tmp_path), "--json"
    )
    oracle = json.loads(stdout)
    assert code == 0 and oracle["rollouts"] == 32 and oracle["success_rate"] == evaluated["oracle"]["success"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--route", "rank1"], "--route needs --pool"),
        (["--pool", "POOL", "--route", "best"], "rank1 or oracle"),
        (["--pool", "POOL", "--patch", "SNAP"], "cannot be combined"),
        (["--pool", "POOL", "--env", "shop"], "is for env 'household'"),
    ],
)
def test_run_pool_options_are_checked(pool_dir: Path, tmp_path: Path, extra: list[str], needle: str) -> None:
    snap = Path(__file__).resolve().parents[2] / "examples" / "patches" / "household_snap_to_admissible.yaml"
    extra = [str(pool_dir) if x == "POOL" else str(snap) if x == "SNAP" else x for x in extra]
    env = [] if "--env" in extra else ["--env", "household"]
    code, _, err = _cli("run", *env, "--agent", "solver", "--n", "2", "--out", str(tmp_path), *extra)
    assert code == 2 and needle in err, err
    assert not list(tmp_path.glob("*/episodes.jsonl"))


def test_an_empty_pool_evaluates_as_h0(tmp_path: Path) -> None:
    SCRIPTED_AGENTS["typo-solver"] = TypoSolver
    out = tmp_path / "empty"
    code, stdout, stderr = _cli(
        "pool", "evolve", "--env", "household", "--agent", "typo-solver", "--directions", "loop_recovery",
        "--batch-size", "8", "--valid-n", "8", "--generations", "1", "--k", "1", "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0 and json.loads(stdout)["siblings"] == [], stdout + stderr
    code, stdout, stderr = _cli("pool", "eval", str(out), "--agent", "typo-solver", "--n", "8", "--json")
    assert code == 0, stdout + stderr
    result = json.loads(stdout)
    assert [r["harness"] for r in result["rows"]] == ["H0"] and result["best_single"] is None
    assert result["rank1"]["success"] == result["rows"][0]["success"] and result["rank1"]["routing"] == {
        "H0": 8
    }
    assert result["oracle"]["covered"] == 0


def test_eval_routes_by_vote_as_its_help_offers(pool_dir: Path) -> None:
    args = ("pool", "eval", str(pool_dir), "--agent", "typo-solver", "--split", "test", "--n", "16", "--json")
    code, stdout, stderr = _cli(*args)
    assert code == 0, stderr
    validation = json.loads(stdout)["rank1"]
    code, stdout, stderr = _cli(*args, "--route", "vote")
    assert code == 0, stderr
    voted = json.loads(stdout)["rank1"]
    # one sibling: the rule judges vote among the siblings that beat H0, so they agree with the profile
    assert voted["routing"] == validation["routing"] and voted["success"] == validation["success"]
    assert (pool_dir / "eval" / "test-n16-seed0-vote.json").is_file()
    code, _, stderr = _cli(*args, "--route", "oracle")
    assert code == 2 and "validation, profile or vote" in stderr
