"""``check_env``: validate any text environment against the reharness contract.

Checks the API shape (gymnasium.Env, Text spaces, ``reset``/``step`` signatures and return types), the info
keys every reharness component relies on, and seeding determinism (the same seed and actions give the same
observations and task identity). All problems are collected and reported together, each with how to fix it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium import spaces

from reharness.core.errors import ReharnessError

REQUIRED_INFO_KEYS = ("task_id", "task_identity", "instruction", "success", "score", "admissible_actions")


class EnvCheckError(ReharnessError):
    """An environment does not satisfy the reharness contract; ``problems`` lists every finding."""

    code = "env_check_failed"

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("environment check failed:\n  - " + "\n  - ".join(problems))


#: What :func:`check_env` checks: a gymnasium environment (the contract is text spaces: ``Env[str, str]``;
#: whatever its spaces are, the check reports them).
Candidate = gymnasium.Env[Any, Any]


def _pick_action(env: Candidate, info: dict[str, Any], step: int) -> str:
    admissible = info.get("admissible_actions")
    if admissible:
        return sorted(admissible)[step % len(admissible)]
    expert = getattr(env, "expert_action", None)
    if expert is not None:
        return str(expert())
    return "look"


def _rollout(env: Candidate, seed: int, steps: int) -> tuple[list[str], list[dict[str, Any]]]:
    obs, info = env.reset(seed=seed)
    observations, infos = [obs], [info]
    for i in range(steps):
        obs, _, terminated, truncated, info = env.step(_pick_action(env, infos[-1], i))
        observations.append(obs)
        infos.append(info)
        if terminated or truncated:
            break
    return observations, infos


def check_env(
    env: Candidate, *, seeds: tuple[int, int] = (0, 1), steps: int = 5, strict: bool = True
) -> list[str]:
    """Validate ``env``; raise :class:`EnvCheckError` listing every problem (or return them if not strict)."""
    problems: list[str] = []
    inner = getattr(env, "unwrapped", env)
    if not isinstance(inner, gymnasium.Env):
        problems.append(f"{type(env).__name__} is not a gymnasium.Env: subclass gymnasium.Env (or TextEnv)")
    for attr in ("observation_space", "action_space"):
        space = getattr(env, attr, None)
        if not isinstance(space, spaces.Text):
            problems.append(
                f"{attr} is {type(space).__name__}, expected gymnasium.spaces.Text "
                "(reharness.envs.UnicodeText accepts any Unicode text)"
            )
    try:
        result = env.reset(seed=seeds[0])
    except Exception as exc:
        problems.append(f"reset(seed={seeds[0]}) raised {type(exc).__name__}: {exc}")
        raise EnvCheckError(problems) from exc
    if not (isinstance(result, tuple) and len(result) == 2):
        problems.append("reset() must return (observation, info)")
        raise EnvCheckError(problems)
    obs, info = result
    if not isinstance(obs, str):
        problems.append(f"reset() observation is {type(obs).__name__}, expected str")
    if not isinstance(info, dict):
        problems.append(f"reset() info is {type(info).__name__}, expected dict")
        raise EnvCheckError(problems)
    missing = [k for k in REQUIRED_INFO_KEYS if k not in info]
    if missing:
        problems.append(
            f"reset() info lacks keys {missing}: every info must carry {list(REQUIRED_INFO_KEYS)} "
            "(admissible_actions may be None)"
        )
    step_result = env.step(_pick_action(env, info, 0))
    if not (isinstance(step_result, tuple) and len(step_result) == 5):
        problems.append("step() must return (observation, reward, terminated, truncated, info)")
    else:
        s_obs, reward, terminated, truncated, s_info = step_result
        if not isinstance(s_obs, str):
            problems.append(f"step() observation is {type(s_obs).__name__}, expected str")
        if not isinstance(reward, int | float):
            problems.append(f"step() reward is {type(reward).__name__}, expected a float")
        if not isinstance(terminated, bool) or not isinstance(truncated, bool):
            problems.append("step() terminated/truncated must be bools")
        if isinstance(s_info, dict):
            missing = [k for k in REQUIRED_INFO_KEYS if k not in s_info]
            if missing:
                problems.append(f"step() info lacks keys {missing}")
            elif s_info["task_identity"] != info.get("task_identity", s_info["task_identity"]):
                problems.append(
                    "task_identity changed within an episode: it must depend only on the task and seed"
                )
        else:
            problems.append("step() info must be a dict")
    if problems:
        if strict:
            raise EnvCheckError(problems)
        return problems
    first = _rollout(env, seeds[0], steps)
    again = _rollout(env, seeds[0], steps)
    if first[0] != again[0]:
        problems.append(
            f"same seed {seeds[0]} and actions gave different observations: seed every random choice "
            "from reset(seed=...) (self.np_random or a random.Random seeded from it)"
        )
    if first[1][0]["task_identity"] != again[1][0]["task_identity"]:
        problems.append(
            "same seed gave a different task_identity: derive it from env id, task id, "
            "instruction, initial state and seed only"
        )
    other = _rollout(env, seeds[1], 0)
    if other[1][0]["task_identity"] == first[1][0]["task_identity"]:
        problems.append(
            f"seeds {seeds[0]} and {seeds[1]} gave the same task_identity: include the seed in it"
        )
    if problems and strict:
        raise EnvCheckError(problems)
    return problems
