"""The environment protocol: what the runtime, the agents and the measurement layers use of an environment.

:class:`reharness.envs.base.TextEnv` implements it, and so does the gymnasium adapter
(:class:`reharness.envs.gym_adapter.GymTextEnv`); a kit's ``env`` may return anything that does. It lives in
``core`` so that every layer can type against it (``env: TextEnvLike``) without importing an environment.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class TextEnvLike(Protocol):
    """A text environment as reharness drives it (gymnasium's ``reset`` / ``step`` plus task access)."""

    @property
    def name(self) -> str: ...

    @property
    def env_id(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def default_max_steps(self) -> int: ...

    @property
    def honoured_effects(self) -> frozenset[str] | None: ...

    @property
    def restrict_forced_to_admissible(self) -> bool: ...

    max_steps: int
    steps: int

    @property
    def last_success(self) -> bool: ...

    @property
    def last_score(self) -> float: ...

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]: ...

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]: ...

    def num_tasks(self) -> int: ...

    def get_task(self, index: int) -> Any: ...

    def admissible_actions(self) -> list[str] | None: ...

    def expert_action(self) -> str: ...

    def random_action(self, rng: random.Random) -> str: ...

    def tools(self) -> list[dict[str, Any]]: ...

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str: ...

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]: ...

    def runtime_state(self) -> dict[str, Any]: ...

    def action_fields(self, action: str) -> dict[str, Any]: ...

    def task_fields(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def run_metrics_of(env_class: Any, results: Sequence[tuple[str, bool]]) -> dict[str, Any]:
    """``env_class.run_metrics(results)`` where the class defines it, else no metrics."""
    metrics = getattr(env_class, "run_metrics", None)
    return dict(metrics(results)) if callable(metrics) else {}
