"""A user's own environment kit, installed as a distribution (examples/kits/reharness-lights, entry point in
``reharness.kits``), goes through every command: envs, run, packet, patch check, improve, pool evolve,
agent train, pool build and train policy — with its detector, operator and harness in play."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit_cli import cli_json, install_example_kit


@pytest.fixture(scope="module")
def kit_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_example_kit(tmp_path_factory.mktemp("site"))


def test_envs_lists_the_installed_kit_with_its_source(kit_path: Path, tmp_path: Path) -> None:
    rows = {r["name"]: r for r in cli_json(tmp_path, [kit_path], "envs")}
    assert rows["lights"]["source"] == "entry point (reharness-lights)"
    assert rows["household"]["source"] == "built-in"
    assert "lights" not in {r["name"] for r in cli_json(tmp_path, [], "envs")}  # not installed: not listed


def test_run_packet_and_patch_check_use_the_kit(kit_path: Path, tmp_path: Path) -> None:
    result = cli_json(tmp_path, [kit_path], "run", "--env", "lights", "--agent", "random", "--n", "8")
    assert result["env"] == "lights" and result["n"] == 8 and result["success_rate"] < 1
    again = cli_json(tmp_path, [kit_path], "run", "--env", "lights", "--agent", "random", "--n", "8")
    assert again["trajectory_digest"] == result["trajectory_digest"]  # resumed, same trajectories
    solver = cli_json(tmp_path, [kit_path], "run", "--env", "lights", "--agent", "solver", "--n", "4")
    assert solver["success_rate"] == 1.0
    run = json.loads((Path(tmp_path) / result["out"] / "run.json").read_text())
    assert run["harness"]["config"]["name"] == "lights-base"  # the kit's harness YAML
    packet = cli_json(tmp_path, [kit_path], "packet", str(tmp_path / result["out"]))
    assert packet["header"]["benchmark"] == "lights"
    assert packet["header"]["code_counts"].get("premature_answer", 0) > 0  # the kit's detector
    patch = tmp_path / "patch.json"
    hook = (
        "def hook(ctx, nb):\n"
        "    wrong = ctx.get('mismatched') or 0\n"
        "    if wrong > 0 and (ctx.get('action') or {}).get('text') == 'done':\n"
        "        return {'type': 'block', 'message': 'not yet'}\n"
        "    return None\n"
    )
    document = {"schema_version": "reharness-patch-v1", "description": "wait", "env": "lights"}
    patch.write_text(json.dumps(document | {"hooks": {"before_action": hook}}))
    checked = cli_json(tmp_path, [kit_path], "patch", "check", str(patch))
    assert checked["valid"] is True, checked
    patched = cli_json(
        tmp_path, [kit_path], "run", "--env", "lights", "--agent", "random", "--n", "8", "--patch", str(patch)
    )
    assert patched["trajectory_digest"] != result["trajectory_digest"]  # the ctx field reached the hook


def test_improve_proposes_the_kits_operator(kit_path: Path, tmp_path: Path) -> None:
    out = cli_json(
        tmp_path, [kit_path], "improve", "--env", "lights", "--agent", "random", "--engineer", "operators",
        "--batch-size", "8", "--k", "3", "--eval-n", "8", "--out", "imp",
    )  # fmt: skip
    assert out["candidates"] and all(c["valid"] for c in out["candidates"])
    used = json.loads((tmp_path / "imp" / "candidates.json").read_text())
    assert "pattern_check" in json.dumps(used)


def test_pool_evolve_one_generation(kit_path: Path, tmp_path: Path) -> None:
    out = cli_json(
        tmp_path, [kit_path], "pool", "evolve", "--env", "lights", "--agent", "random",
        "--directions", "goal_tracking", "--generations", "1", "--k", "2", "--batch-size", "6",
        "--valid-n", "6", "--out", "pool",
    )  # fmt: skip
    assert out["env"] == "lights" and (tmp_path / "pool" / "pool.json").is_file()


def test_train_policy_one_step_with_a_tiny_model(kit_path: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    model = cli_json(
        tmp_path, [kit_path], "agent", "train", "--env", "lights", "--size", "micro", "--out", "m"
    )
    assert model["params"] > 0
    pool = cli_json(
        tmp_path, [kit_path], "pool", "build", "--env", "lights", "--agent", "hf:m",
        "--sibling", "goal_tracking=pattern_check", "--no-profile", "--out", "pb",
    )  # fmt: skip
    assert [s["direction"] for s in pool["siblings"]] == ["goal_tracking"]
    trained = cli_json(
        tmp_path, [kit_path], "train", "policy", "--env", "lights", "--agent", "hf:m", "--pool", "pb",
        "--rescue", "resample", "--steps", "1", "--k", "2", "--tasks-per-step", "1", "--micro-batches", "1",
        "--out", "tp",
    )  # fmt: skip
    assert trained["steps"] == 1 and (tmp_path / "tp" / "model").is_dir()


def test_a_kit_by_module_path_needs_no_installation(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "examples" / "kits" / "reharness-lights" / "src"
    result = cli_json(
        tmp_path, [src], "run", "--env", "reharness_lights.kit:KIT", "--agent", "solver", "--n", "3"
    )
    assert result["env"] == "lights" and result["success_rate"] == 1.0
