"""The real-benchmark kits as kits: valid objects, entry points, harnesses, and their failure detectors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from reharness.envs.kit import import_object
from reharness.envs.registry import get_kit
from reharness.failures.codes import FailureCode
from reharness.kits.bfcl.failures import bfcl_findings
from reharness.kits.registration import kit_objects
from reharness.kits.scienceworld.failures import scienceworld_findings
from reharness.kits.twx.failures import text_game_findings
from reharness.runtime.harness import base_harness_config
from reharness.store.records import EpisodeRecord, StepRecord

ROOT = Path(__file__).resolve().parents[2]
NAMES = (
    "twx-twc",
    "twx-twc-easy",
    "twx-cookingworld",
    "twx-coin",
    "twx-mapreader",
    "twx-arithmetic",
    "twx-sorting",
    "twx-simonsays",
    "twx-peckingorder",
    "scienceworld",
    "bfcl",
)


def test_every_kit_is_valid_and_declared_as_an_entry_point() -> None:
    kits = kit_objects()
    assert set(kits) == set(NAMES)
    points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["reharness.kits"]
    for name, kit in kits.items():
        assert kit.check() == [], name
        assert import_object(points[name], name) is kit  # the entry point names this very kit
        assert get_kit(name).name == name and get_kit(kit.gym_id or "").name == name


@pytest.mark.parametrize("name", NAMES)
def test_kit_harnesses_load(name: str) -> None:
    kit = get_kit(name)
    for harness in kit.harnesses:
        config = base_harness_config(name, harness)
        assert config.name.startswith(name.split("-")[0])
    if name == "scienceworld":
        assert base_harness_config(name, "valid").env_options == {"list_valid_actions": True}
    if name == "bfcl":
        assert base_harness_config(name, "fc").protocol == "tools"


def record(env: str, steps: list[tuple[str, str, list[str]]], terminated_last: bool = False) -> EpisodeRecord:
    """A failed episode of ``env`` with the given (action, observation, flags) steps."""
    built = [
        StepRecord(
            index=i, action=a, observation=o, flags=f, terminated=terminated_last and i == len(steps) - 1
        )
        for i, (a, o, f) in enumerate(steps)
    ]
    return EpisodeRecord(
        run_id="r",
        episode_index=0,
        seed=0,
        env=env,
        task_id=f"{env}/test/000000",
        task_identity="x",
        task_type="t",
        instruction="i",
        initial_observation="o",
        harness_id="h",
        policy_id="p",
        steps=built,
        num_steps=len(built),
    )


def test_text_game_detectors() -> None:
    looping = record(
        "twx-coin",
        [
            (a, "obs", [])
            for a in ["look around", "move north", "look around", "inventory", "look around", "move south"]
        ],
    )
    (finding,) = [f for f in text_game_findings(looping) if f.code is FailureCode.REPEATED_ACTION]
    assert finding.steps == (0, 2, 3, 4)
    moving = record(
        "twx-coin", [(a, "obs", []) for a in ["look around", "move north", "move east", "look around"]]
    )
    assert text_game_findings(moving) == []
    invalid = record(
        "twx-coin", [("fly north", "Unknown action", ["invalid_action"]), ("take coin", "ok", [])]
    )
    (finding,) = text_game_findings(invalid)
    assert finding.code is FailureCode.INVALID_ACTION and "fly" in finding.detail


def test_scienceworld_detectors() -> None:
    menu = (
        "Ambiguous request: Please enter the number for the action you intended (or blank to cancel):\n0:\ta"
    )
    answered_badly = record(
        "scienceworld", [("pick up thermometer", menu, []), ("pick up thermometer", menu, [])]
    )
    assert [
        f.steps for f in scienceworld_findings(answered_badly) if f.code is FailureCode.INVALID_ACTION
    ] == [(1,)]
    answered_well = record("scienceworld", [("pick up thermometer", menu, []), ("0", "You pick up it.", [])])
    assert scienceworld_findings(answered_well) == []
    focus = record(
        "scienceworld",
        [("go to kitchen", "ok", []), ("focus on chair", "You focus on the chair.", [])],
        terminated_last=True,
    )
    (finding,) = scienceworld_findings(focus)
    assert finding.code is FailureCode.WRONG_ANSWER and finding.steps == (1,)


def test_bfcl_detectors(need_bfcl: None) -> None:
    steps = [
        ("cd folder='x'", "Error: not a Python call expression", ["invalid_action"]),
        ("cd()", "cd() -> Error during execution: missing 1 required positional argument", []),
        ("tail(file_name='log.txt', lines='20')", "tail(...) -> {}", []),
        ("end_turn", "User: next", []),
    ]
    findings = {f.code: f for f in bfcl_findings(record("bfcl", steps))}
    assert findings[FailureCode.FORMAT_ERROR].steps == (0,)
    assert findings[FailureCode.TOOL_ERROR].steps == (1, 2)
    assert "missing required argument 'folder'" in findings[FailureCode.TOOL_ERROR].detail
    no_cd = [
        (
            "cat(file_name='notes.txt')",
            'cat(...) -> {"error": "cat: notes.txt: No such file or directory"}',
            [],
        )
    ]
    (finding,) = bfcl_findings(record("bfcl", no_cd))
    assert "forgot to cd" in finding.detail
    with_cd = [("cd(folder='docs')", "ok", []), *no_cd]
    assert bfcl_findings(record("bfcl", with_cd)) == []
