"""Conformance of every built-in environment: check_env, gymnasium registration, base-harness solver."""

from __future__ import annotations

import asyncio

import gymnasium
import pytest

from reharness.envs import BUILTIN_ENVS, check_env, make_env
from reharness.runtime import EpisodeRunner, Harness, RandomAgent, SolverAgent


@pytest.mark.parametrize("name", sorted(BUILTIN_ENVS))
def test_check_env_passes(name: str) -> None:
    env = make_env(name, split="test")
    assert check_env(env) == []
    assert env.name == name and env.env_id == BUILTIN_ENVS[name].gym_id


@pytest.mark.parametrize("name", sorted(BUILTIN_ENVS))
def test_gymnasium_make_by_id(name: str) -> None:
    env = gymnasium.make(BUILTIN_ENVS[name].gym_id, split="valid")
    obs, info = env.reset(seed=3)
    assert isinstance(obs, str) and info["task_id"].startswith(f"{name}/valid/")
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("name", sorted(BUILTIN_ENVS))
def test_solver_through_base_harness_and_random_fails(name: str) -> None:
    env = make_env(name, split="test")
    harness = Harness.base(name)

    async def go(agent, k: int) -> list[bool]:
        runner = EpisodeRunner(env, agent, harness)
        return [(await runner.run(env.get_task(i), seed=i)).success for i in range(k)]

    assert all(asyncio.run(go(SolverAgent(), 25)))
    assert sum(asyncio.run(go(RandomAgent(), 25))) <= 5


@pytest.mark.parametrize("name", sorted(BUILTIN_ENVS))
def test_task_identity_depends_on_seed_and_task(name: str) -> None:
    env = make_env(name, split="test")
    _, a = env.reset(seed=1, options={"task": 0})
    _, b = env.reset(seed=1, options={"task": 0})
    _, c = env.reset(seed=2, options={"task": 0})
    _, d = env.reset(seed=1, options={"task": 1})
    assert a["task_identity"] == b["task_identity"]
    assert len({a["task_identity"], c["task_identity"], d["task_identity"]}) == 3
