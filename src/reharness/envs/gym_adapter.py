"""``--env gym:ID``: any gymnasium text environment, with no kit, through every command.

:class:`GymTextEnv` wraps ``gymnasium.make(ID)`` (``ID`` may be ``module:Name-v0``, which imports ``module``
first) in the interface the runtime uses (:class:`reharness.envs.kit.TextEnvLike`). What it reads from the
environment, by convention, when present:

- ``info["admissible_commands"]`` or ``info["admissible_actions"]``: the valid actions of the current state;
- ``info["won"]`` or ``info["success"]``: whether the task is solved; ``info["score"]``: the score (0..1;
  without it, 1 for a success and 0 otherwise);
- ``info["task"]`` or ``info["instruction"]``: the task text; ``info["task_type"]``;
- ``info["invalid_action"]``: the environment's own verdict on the last action (without it, an action
  outside the admissible list of the state it was taken in counts as invalid);
- ``info["tools"]``: OpenAI-style tool specs for the tool-call protocol.

Tasks: task ``i`` of a split is ``reset(seed=s)`` with ``s`` derived from (ID, split, i), so splits are
disjoint seed streams; an environment whose ``metadata["task_options"]`` is true is reset with
``options={"split": split, "index": i}`` instead, and ``metadata["split_sizes"]`` (``{"test": 100, …}``)
bounds each split. Anything the adapter cannot infer (no text spaces, no solver for ``--agent solver``) is a
clear error that names the missing piece and says to write a kit.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces

from reharness.core.errors import ConfigError, EnvError, did_you_mean
from reharness.core.hashing import derive_seed
from reharness.envs.base import SPLITS, Task, task_identity
from reharness.envs.kit import EnvKit

DEFAULT_TASKS = 100_000
ADMISSIBLE_KEYS = ("admissible_commands", "admissible_actions")
SUCCESS_KEYS = ("won", "success")
TASK_KEYS = ("task", "instruction")


def _make_inner(gym_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    try:
        return gymnasium.make(gym_id, disable_env_checker=True, **kwargs)
    except gymnasium.error.Error as exc:
        close = difflib.get_close_matches(gym_id.rpartition(":")[2], [str(k) for k in gymnasium.registry], 3)
        raise ConfigError(
            f"gym:{gym_id}: gymnasium cannot make it ({type(exc).__name__}: {exc})",
            hint=(f"did you mean {', '.join(close)}? " if close else "")
            + "register the environment with gymnasium, or write gym:module:ID so that gymnasium first "
            "imports the module that registers ID",
        ) from None
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"gym:{gym_id}: {exc}", hint="install the package that registers the environment"
        ) from None
    except TypeError as exc:
        raise ConfigError(
            f"gym:{gym_id}: the environment does not take these options ({exc})",
            hint="drop the harness's env_options the environment does not accept",
        ) from None


def _is_text(space: Any) -> bool:
    return isinstance(space, spaces.Text)


class GymTextEnv(gymnasium.Env[str, str]):
    """A gymnasium text environment in the runtime's interface (see the module docstring)."""

    honoured_effects: ClassVar[frozenset[str] | None] = None
    restrict_forced_to_admissible: ClassVar[bool] = False

    def __init__(
        self,
        gym_id: str,
        split: str = "train",
        max_steps: int | None = None,
        *,
        name: str | None = None,
        state_keys: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        if split not in SPLITS:
            raise EnvError(f"gym:{gym_id}: unknown split {split!r}", hint=did_you_mean(split, list(SPLITS)))
        self.gym_id = gym_id
        self.name = name or f"gym:{gym_id}"
        self.state_keys = tuple(state_keys)
        self.env_id = gym_id
        match = re.search(r"-v(\d+)$", gym_id)
        self.version = int(match.group(1)) if match else 0
        self.inner = _make_inner(gym_id, **kwargs)
        problems = [
            f"{attr} is {type(getattr(self.inner, attr, None)).__name__}"
            for attr in ("observation_space", "action_space")
            if not _is_text(getattr(self.inner, attr, None))
        ]
        if problems:
            raise ConfigError(
                f"gym:{gym_id} is not a text environment: {'; '.join(problems)} "
                "(reharness needs gymnasium.spaces.Text observations and actions)",
                hint="wrap it so that observations and actions are strings (gymnasium.spaces.Text), or write "
                "a kit whose env translates (docs/kits.md)",
            )
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space
        spec_steps = getattr(getattr(self.inner, "spec", None), "max_episode_steps", None)
        self.default_max_steps = int(spec_steps or 50)
        self.max_steps = int(max_steps) if max_steps is not None else self.default_max_steps
        meta: Mapping[str, Any] = getattr(self.inner.unwrapped, "metadata", {}) or {}
        self.task_options = bool(meta.get("task_options"))
        self.split_sizes = {str(k): int(v) for k, v in dict(meta.get("split_sizes") or {}).items()}
        self.split = split
        self.task: Task | None = None
        self.steps = 0
        self.done = False
        self._info: dict[str, Any] = {}
        self._identity = ""
        self.last_success = False
        self.last_score = 0.0

    # ------------------------------------------------------------------ tasks
    def num_tasks(self) -> int:
        return self.split_sizes.get(self.split, DEFAULT_TASKS)

    def get_task(self, index: int) -> Task:
        if not 0 <= index < self.num_tasks():
            raise EnvError(f"{self.name}: task index {index} out of range 0..{self.num_tasks() - 1}")
        state: dict[str, Any]
        if self.task_options:
            state = {"split": self.split, "index": index}
        else:
            state = {"seed": derive_seed("gym-task", self.gym_id, self.split, index) % (2**31)}
        return Task(f"{self.name}/{self.split}/{index:06d}", self.split, "", "", state)

    def task_by_id(self, task_id: str) -> Task:
        prefix, _, index = task_id.rpartition("/")
        if prefix != f"{self.name}/{self.split}" or not index.isdigit():
            raise EnvError(
                f"{self.name}: malformed task id {task_id!r}", hint=f"ids look like {self.name}/test/000042"
            )
        return self.get_task(int(index))

    # ------------------------------------------------------------------ episode
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        chosen = (options or {}).get("task")
        if isinstance(chosen, Task):
            task = chosen
        elif isinstance(chosen, str):
            task = self.task_by_id(chosen)
        elif isinstance(chosen, int):
            task = self.get_task(chosen)
        else:
            task = self.get_task(random.Random(derive_seed("task-choice", seed)).randrange(self.num_tasks()))
        if self.task_options:
            obs, info = self.inner.reset(options={"split": task.state["split"], "index": task.state["index"]})
        else:
            obs, info = self.inner.reset(seed=int(task.state["seed"]))
        self._check_obs(obs, "reset")
        info = dict(info or {})
        instruction = next((str(info[k]) for k in TASK_KEYS if info.get(k)), "")
        # the identity is the task's as planned (before reset told its text), so plans and records agree
        self._identity = task_identity(self.env_id, self.version, task, seed)
        self.task = Task(task.task_id, task.split, instruction, str(info.get("task_type", "")), task.state)
        self.steps, self.done = 0, False
        self.last_success, self.last_score = False, 0.0
        self._info = info
        return obs, self._out_info(info, invalid=False)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise EnvError("step() called before reset()", hint="call env.reset(seed=...) first")
        before = self.admissible_actions()
        obs, reward, terminated, truncated, info = self.inner.step(action)
        self._check_obs(obs, "step")
        info = dict(info or {})
        self.steps += 1
        won = next((bool(info[k]) for k in SUCCESS_KEYS if k in info), False)
        self.last_success = won
        self.last_score = float(info["score"]) if "score" in info else (1.0 if won else 0.0)
        truncated = bool(truncated) or (not terminated and self.steps >= self.max_steps)
        self.done = bool(terminated) or truncated
        if "invalid_action" in info:
            invalid = bool(info["invalid_action"])
        else:
            invalid = before is not None and action not in before
        self._info = info
        return obs, float(reward), bool(terminated), truncated, self._out_info(info, invalid)

    def _check_obs(self, obs: Any, where: str) -> None:
        if not isinstance(obs, str):
            raise EnvError(
                f"{self.name}: {where}() returned a {type(obs).__name__} observation, not a string",
                hint="the environment must return text observations (gymnasium.spaces.Text)",
            )

    def _out_info(self, info: dict[str, Any], invalid: bool) -> dict[str, Any]:
        assert self.task is not None
        return info | {
            "task_id": self.task.task_id,
            "task_identity": self._identity,
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "success": self.last_success,
            "score": self.last_score,
            "step": self.steps,
            "max_steps": self.max_steps,
            "invalid_action": invalid,
            "admissible_actions": None if self.done else self.admissible_actions(),
            "tools": self.tools(),
        }

    # ------------------------------------------------------------------ what hooks and agents read
    def admissible_actions(self) -> list[str] | None:
        for key in ADMISSIBLE_KEYS:
            value = self._info.get(key)
            if isinstance(value, Sequence) and not isinstance(value, str):
                return [str(a) for a in value]
        return None

    def random_action(self, rng: random.Random) -> str:
        actions = self.admissible_actions()
        if not actions:
            raise EnvError(
                f"{self.name} lists no admissible actions, so the random agent cannot choose one",
                hint="report info['admissible_commands'] from the environment, or write a kit",
            )
        return rng.choice(actions)

    def expert_action(self) -> str:
        for source in (self.inner.unwrapped, self.inner):
            expert = getattr(source, "expert_action", None)
            if callable(expert):
                return str(expert())
        raise EnvError(
            f"{self.name} has no scripted solver (--agent solver)",
            hint="give the environment an expert_action() method, or write a kit whose env has one",
        )

    def tools(self) -> list[dict[str, Any]]:
        tools = self._info.get("tools")
        return list(tools) if isinstance(tools, list) else []

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        return {"task_type": self.task.task_type, "instruction": self.task.instruction}

    def runtime_state(self) -> dict[str, Any]:
        """The ``info`` values a kit names in ``ctx_fields``, as top-level ``ctx`` fields for hooks."""
        return {key: self._info.get(key) for key in self.state_keys}

    def action_fields(self, action: str) -> dict[str, Any]:
        return {}

    @classmethod
    def run_metrics(cls, results: Sequence[tuple[str, bool]]) -> dict[str, Any]:
        return {}

    def render(self) -> Any:
        return self.inner.render()

    def close(self) -> None:
        self.inner.close()


def gym_env(
    gym_id: str, name: str | None = None, state_keys: Sequence[str] = ()
) -> Callable[..., GymTextEnv]:
    """A kit's ``env`` factory for a gymnasium text environment: the adapter under the kit's ``name``, with
    the ``info`` keys ``state_keys`` shown to hooks as ``ctx`` fields (what a kit lists in ``ctx_fields``)."""

    def make(split: str = "train", max_steps: int | None = None, **kwargs: Any) -> GymTextEnv:
        return GymTextEnv(gym_id, split, max_steps, name=name, state_keys=state_keys, **kwargs)

    return make


def gym_kit(gym_id: str) -> EnvKit:
    """The generic kit of ``gym:ID``: the adapter, no environment-specific knowledge. The environment is
    built once here so that a wrong id or non-text spaces fail before any work."""
    if not gym_id.strip():
        raise ConfigError(
            "--env gym: names no environment", hint="write --env gym:ID, e.g. gym:mypkg:Maze-v0"
        )

    make = gym_env(gym_id)
    make(split="test").close()
    return EnvKit(name=f"gym:{gym_id}", env=make, summary=f"gymnasium environment {gym_id}", source="gym")
