"""Gymnasium conventions: ``import reharness`` registers every built-in id cheaply, so ``gym.make`` works.

Each check runs in a fresh interpreter, so gymnasium's registry holds only what ``import reharness`` put there
(the test process itself has long since registered everything through ``make_env``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reharness.envs.registry import BUILTIN_ENVS

GYM_IDS = [spec.gym_id for spec in BUILTIN_ENVS.values() if spec.gym_id.startswith("reharness/")]


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_builtin_id_is_covered() -> None:
    assert sorted(GYM_IDS) == [
        "reharness/Apps-v0",
        "reharness/Code-v0",
        "reharness/DB-v0",
        "reharness/Household-v0",
        "reharness/Shop-v0",
    ]


@pytest.mark.parametrize("gym_id", GYM_IDS)
def test_gym_make_right_after_import_reharness(gym_id: str) -> None:
    code = f"""
import json, gymnasium as gym
before = {gym_id!r} in gym.registry
import reharness
gym.register_envs(reharness)
env = gym.make({gym_id!r})
obs, info = env.reset(seed=1)
print(json.dumps({{"before": before, "type": type(env.unwrapped).__name__, "obs": isinstance(obs, str),
                  "task_id": info["task_id"], "env_id": env.unwrapped.env_id}}))
"""
    out = json.loads(_python(code))
    assert out["before"] is False  # nothing but `import reharness` registered it
    assert out["obs"] is True and out["env_id"] == gym_id
    name = gym_id.split("/")[1].split("-")[0].lower()
    assert out["task_id"].startswith(f"{name}/train/")


def test_import_reharness_registers_without_loading_env_code_or_heavy_libraries() -> None:
    code = """
import json, sys
import gymnasium as gym
import reharness
ids = sorted(i for i in gym.registry if i.startswith("reharness/"))
heavy = ("reharness.envs.", "reharness.kits", "torch", "transformers", "trl", "ray")
api = ("reharness.envs.registry", "reharness.envs.kit")  # the kit API and registry, no environment code
loaded = sorted(m for m in sys.modules if m.startswith(heavy) and m not in api)
print(json.dumps({"ids": ids, "loaded": loaded}))
"""
    out = json.loads(_python(code))
    assert out["ids"] == sorted(GYM_IDS)
    assert out["loaded"] == []
