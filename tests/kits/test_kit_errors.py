"""Bad kits and bad environments: every mistake is a clear error (exit 2, names the kit and the fix), or,
inside an episode, an ``env_error`` in the trajectory — never a traceback, never a lost run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from kit_cli import cli, cli_json

KITS = """
import gymnasium
from gymnasium import spaces

from reharness.engineer.operators import Fragment, Operator
from reharness.envs import EnvKit
from reharness.envs.gym_adapter import gym_env


class Fragile(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(self, fail_reset=False):
        self.observation_space = spaces.Text(200)
        self.action_space = spaces.Text(200)
        self.fail_reset = fail_reset

    def reset(self, *, seed=None, options=None):
        if self.fail_reset:
            raise RuntimeError("the simulator did not start")
        return "ready", {"admissible_commands": ["explode"], "task": "survive"}

    def step(self, action):
        raise RuntimeError("the simulator crashed")


gymnasium.register(id="fragile/Fragile-v0", entry_point=Fragile)
gymnasium.register(id="fragile/NoStart-v0", entry_point=Fragile, kwargs={"fail_reset": True})
FRAGILE = EnvKit(name="fragile", env=gym_env("fragile/Fragile-v0", name="fragile"))
NO_START = EnvKit(name="no-start", env=gym_env("fragile/NoStart-v0", name="no-start"))


class Lost(Operator):
    name = "lost"
    summary = "x"
    codes = ("step_limit",)
    envs = ("lost",)
    direction = "nowhere"

    def space(self, env):
        return {}

    def fragments(self, params, env):
        return {}


LOST = EnvKit(name="lost", env=gym_env("fragile/Fragile-v0", name="lost"), operators=(Lost(),))
NOT_A_KIT = 42


def factory():
    raise ValueError("the factory broke")
"""


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "bad_kits.py").write_text(textwrap.dedent(KITS))
    (site / "raises_on_import.py").write_text("raise ImportError('a dependency is missing')\n")
    dist = site / "bad_kits-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-kits\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[reharness.kits]\nghost = no_such_module:KIT\nnothing = bad_kits:MISSING\n"
        "broken = raises_on_import:KIT\nfragile = bad_kits:FRAGILE\n"
    )
    return site


def _refused(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_bad_entry_points_and_module_paths_are_clear_errors(tmp_path: Path) -> None:
    site = _site(tmp_path)
    _refused(cli(tmp_path, [site], "run", "--env", "ghost", "--n", "1"), "ghost", "no_such_module", "install")
    _refused(cli(tmp_path, [site], "run", "--env", "nothing", "--n", "1"), "nothing", "bad-kits")
    _refused(cli(tmp_path, [site], "run", "--env", "broken", "--n", "1"), "broken", "a dependency is missing")
    _refused(
        cli(tmp_path, [site], "run", "--env", "bad_kits:NOT_A_KIT", "--n", "1"), "not an environment kit"
    )
    _refused(cli(tmp_path, [site], "run", "--env", "bad_kits:factory", "--n", "1"), "the factory broke")
    _refused(
        cli(tmp_path, [site], "run", "--env", "bad_kits:LOST", "--n", "1"), "unknown direction 'nowhere'"
    )
    _refused(cli(tmp_path, [site], "run", "--env", "nonesuch", "--n", "1"), "unknown environment", "gym:ID")
    rows = {r["name"]: r for r in cli_json(tmp_path, [site], "envs")}  # a broken kit does not break the list
    assert (
        "fails to load" in rows["ghost"]["summary"] and rows["fragile"]["source"] == "entry point (bad-kits)"
    )


def test_an_environment_that_raises_becomes_an_env_error_in_the_trajectory(tmp_path: Path) -> None:
    site = _site(tmp_path)
    result = cli_json(tmp_path, [site], "run", "--env", "fragile", "--agent", "random", "--n", "2")
    assert result["env_errors"] == 2 and result["n"] == 2
    lines = (tmp_path / result["out"] / "episodes.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert all("simulator crashed" in (r["error"] or "") for r in records)
    assert all("env_error" in r["steps"][-1]["flags"] for r in records)
    no_start = cli_json(
        tmp_path, [site], "run", "--env", "bad_kits:NO_START", "--agent", "random", "--n", "2"
    )
    assert no_start["env_errors"] == 2  # reset raised: the episodes are recorded, the run finishes
    lines = (tmp_path / no_start["out"] / "episodes.jsonl").read_text().splitlines()
    assert all("did not start" in (json.loads(line)["error"] or "") for line in lines)
