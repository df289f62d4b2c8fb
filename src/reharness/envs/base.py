"""The base class of reharness's text environments and the :class:`Task` record.

A :class:`TextEnv` is a ``gymnasium.Env`` with text observations and text actions. Subclasses supply a
deterministic task generator (``generate_task``), the environment dynamics (``_load`` /
``_initial_observation`` / ``_transition``), and a state-based expert (``expert_action``) that returns the
correct next action from *any* state, so the scripted solver also recovers from off-path states. The base
class owns seeding, task selection, the step limit, task identity and the ``info`` dictionary, so every
environment reports the same keys.

Splits: a generated task's content decides its split (``split_of_content``), and the generator for a split
only ever draws from its own seed stream and keeps candidates whose content hashes into that split. Splits
are therefore disjoint by construction and one split never changes when another split's code changes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces

from reharness.core.errors import EnvError, did_you_mean
from reharness.core.hashing import derive_seed, stable_hash

SPLITS = ("train", "valid", "test")
#: Share of the content-hash space owned by each split (train gets the rest).
_SPLIT_BUCKETS = {"valid": range(0, 10), "test": range(10, 20)}


class UnicodeText(spaces.Text):
    """A ``gymnasium.spaces.Text`` that accepts any Unicode string up to ``max_length``.

    Real observations hold punctuation, accents and newlines; gymnasium's default charset is alphanumeric.
    """

    def __init__(self, max_length: int, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


@dataclass(frozen=True)
class Task:
    """One task: what the agent is told plus the JSON-able initial state the env is rebuilt from.

    ``gold`` holds privileged information (answers, reference SQL, target product) used by the expert and the
    grader; it is never shown to the agent.
    """

    task_id: str
    split: str
    instruction: str
    task_type: str
    state: Mapping[str, Any]
    gold: Mapping[str, Any] = field(default_factory=dict)

    def content_hash(self) -> str:
        return stable_hash({"instruction": self.instruction, "type": self.task_type, "state": self.state})


def split_of_content(content_hash: str) -> str:
    """Map a task's content hash to the split that owns it (about 80/10/10 train/valid/test)."""
    bucket = int(content_hash[:8], 16) % 100
    for split, owned in _SPLIT_BUCKETS.items():
        if bucket in owned:
            return split
    return "train"


def task_identity(env_id: str, version: int, task: Task, seed: int | None) -> str:
    """Stable hash of (env id + version, task id, instruction, initial state, seed)."""
    return stable_hash(
        {
            "env": env_id,
            "version": version,
            "task_id": task.task_id,
            "instruction": task.instruction,
            "state": task.state,
            "seed": seed,
        },
        length=24,
    )


@dataclass
class Transition:
    """What a subclass's ``_transition`` returns for one action."""

    observation: str
    reward: float = 0.0
    done: bool = False
    success: bool = False
    score: float = 0.0
    invalid: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class TextEnv(gymnasium.Env[str, str]):
    """Base class of the built-in text environments (see module docstring)."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium convention

    #: Short name (the kit name), gymnasium id and version.
    name: ClassVar[str] = ""
    env_id: ClassVar[str] = ""
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 50
    #: Effect kinds the env honours (``None`` = all); db honours block and hint only.
    honoured_effects: ClassVar[frozenset[str] | None] = None
    #: Number of tasks addressable in each split (generated envs: large and lazily generated).
    split_size: ClassVar[int] = 100_000
    max_observation_chars: ClassVar[int] = 20_000
    #: Drop hook effects that force/rewrite to an action outside ``admissible_actions()`` (ALFWorld rule).
    restrict_forced_to_admissible: ClassVar[bool] = False

    def __init__(
        self, split: str = "train", max_steps: int | None = None, render_mode: str | None = None
    ) -> None:
        if split not in self.available_splits():
            raise EnvError(
                f"{self.name}: unknown split {split!r}",
                hint=did_you_mean(split, list(self.available_splits())),
            )
        self.split = split
        self.max_steps = int(max_steps) if max_steps is not None else self.default_max_steps
        if self.max_steps <= 0:
            raise EnvError(f"max_steps must be positive, got {max_steps}", hint="pass max_steps >= 1")
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_length=self.max_observation_chars)
        self.action_space = UnicodeText(max_length=100_000)
        self.task: Task | None = None
        self.steps = 0
        self.done = False
        self._seed: int | None = None
        self._last_obs = ""
        self._last_success = False
        self._last_score = 0.0

    # ------------------------------------------------------------------ to implement in subclasses
    def generate_task(self, split: str, index: int) -> Task:
        """Return task ``index`` of ``split`` deterministically (subclasses use :meth:`draw_task`)."""
        raise NotImplementedError

    def _load(self, task: Task) -> None:
        """Build the episode's initial state from ``task``."""
        raise NotImplementedError

    def _initial_observation(self) -> str:
        raise NotImplementedError

    def _transition(self, action: str) -> Transition:
        raise NotImplementedError

    def admissible_actions(self) -> list[str] | None:
        """Valid actions in the current state, or ``None`` when the env has no finite list."""
        return None

    def expert_action(self) -> str:
        """The correct next action from the current state (the scripted solver)."""
        raise NotImplementedError

    def random_action(self, rng: random.Random) -> str:
        """A uniformly random admissible action, or a random well-formed action."""
        actions = self.admissible_actions()
        if not actions:
            raise NotImplementedError
        return rng.choice(actions)

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI-style tool specs for the tool-calling protocol."""
        return []

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Translate a tool call into this env's text action (raise ``ValueError`` when malformed)."""
        raise ValueError(f"{self.name} has no tool {name!r}")

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        """Inverse of :meth:`action_from_tool_call`, used to render scripted actions as tool calls."""
        raise ValueError(f"{self.name} cannot express {action!r} as a tool call")

    def runtime_state(self) -> dict[str, Any]:
        """Environment-specific fields exposed to hooks as ``ctx`` (world snapshot, page state, …)."""
        return {}

    def action_fields(self, action: str) -> dict[str, Any]:
        """Structured fields of a proposed action for ``ctx['action']`` (e.g. db: the SQL)."""
        return {}

    @classmethod
    def run_metrics(cls, results: Sequence[tuple[str, bool]]) -> dict[str, Any]:
        """Env-specific metrics of a run from its ``(task_id, success)`` pairs (e.g. TGC, SGC); none here."""
        return {}

    @property
    def last_success(self) -> bool:
        """Whether the goal held after the latest step."""
        return self._last_success

    @property
    def last_score(self) -> float:
        """The env's score after the latest step (0..1)."""
        return self._last_score

    def task_fields(self) -> dict[str, Any]:
        """Task fields exposed to hooks as ``ctx['task']`` (no gold answers)."""
        assert self.task is not None
        return {"task_type": self.task.task_type, "instruction": self.task.instruction}

    # ------------------------------------------------------------------ shared machinery
    def available_splits(self) -> tuple[str, ...]:
        """Splits this instance can serve (a loaded task file serves only its own)."""
        return SPLITS

    def draw_task(self, split: str, index: int, make: Any, max_attempts: int = 10_000) -> Task:
        """Draw task ``index`` of ``split`` with ``make(rng, task_id) -> Task``, keeping only candidates whose
        content hash belongs to ``split``. The rng depends only on (env, split, index, attempt)."""
        if split not in SPLITS:
            raise EnvError(f"{self.name}: unknown split {split!r}", hint=did_you_mean(split, list(SPLITS)))
        if not 0 <= index < self.split_size:
            raise EnvError(f"{self.name}: task index {index} out of range 0..{self.split_size - 1}")
        task_id = f"{self.name}/{split}/{index:06d}"
        for attempt in range(max_attempts):
            rng = random.Random(derive_seed(self.env_id, split, index, attempt))
            task = make(rng, task_id)
            if split_of_content(task.content_hash()) == split:
                return task
        raise EnvError(f"{self.name}: could not draw a task for split {split!r} index {index}")

    def get_task(self, index: int) -> Task:
        return self.generate_task(self.split, index)

    def num_tasks(self) -> int:
        return self.split_size

    def _resolve_task(self, seed: int | None, options: Mapping[str, Any] | None) -> Task:
        chosen = (options or {}).get("task")
        if isinstance(chosen, Task):
            return chosen
        if isinstance(chosen, str):
            return self.task_by_id(chosen)
        if isinstance(chosen, int):
            return self.get_task(chosen)
        if chosen is not None:
            raise EnvError(
                f"options['task'] must be a Task, a task id or an index, got {type(chosen).__name__}",
                hint=f"pass reset(options={{'task': 3}}) or "
                f"reset(options={{'task': '{self.name}/test/000003'}})",
            )
        index = random.Random(derive_seed("task-choice", seed)).randrange(self.num_tasks())
        return self.get_task(index)

    def task_by_id(self, task_id: str) -> Task:
        prefix, _, rest = task_id.partition("/")
        split, _, index = rest.partition("/")
        if prefix != self.name or split not in SPLITS or not index.isdigit():
            raise EnvError(
                f"{self.name}: malformed task id {task_id!r}",
                hint=f"task ids look like '{self.name}/test/000042'",
            )
        return self.generate_task(split, int(index))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._seed = seed
        self.task = self._resolve_task(seed, options)
        self.steps = 0
        self.done = False
        self._last_success = False
        self._last_score = 0.0
        self._load(self.task)
        obs = self._clip(self._initial_observation())
        self._last_obs = obs
        return obs, self._info(invalid=False, extra={})

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise EnvError("step() called before reset()", hint="call env.reset(seed=...) first")
        if self.done:
            raise EnvError("step() called on a finished episode", hint="call env.reset() to start a new one")
        if not isinstance(action, str):
            raise EnvError(f"actions are strings, got {type(action).__name__}")
        self.steps += 1
        result = self._transition(action)
        self._last_success = bool(result.success)
        self._last_score = float(result.score)
        terminated = bool(result.done)
        truncated = not terminated and self.steps >= self.max_steps
        self.done = terminated or truncated
        obs = self._clip(result.observation)
        self._last_obs = obs
        return obs, float(result.reward), terminated, truncated, self._info(result.invalid, result.info)

    def _clip(self, text: str) -> str:
        limit = self.max_observation_chars
        return text if len(text) <= limit else text[: limit - 12] + " [TRUNCATED]"

    def _info(self, invalid: bool, extra: dict[str, Any]) -> dict[str, Any]:
        assert self.task is not None
        info: dict[str, Any] = {
            "task_id": self.task.task_id,
            "task_identity": task_identity(self.env_id, self.version, self.task, self._seed),
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "success": self._last_success,
            "score": self._last_score,
            "step": self.steps,
            "max_steps": self.max_steps,
            "invalid_action": invalid,
            "admissible_actions": None if self.done else self.admissible_actions(),
            "tools": self.tools(),
        }
        info.update(extra)
        return info

    def render(self) -> str:
        return self._last_obs
