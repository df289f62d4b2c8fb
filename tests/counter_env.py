"""A real, tiny TextEnv used by the runtime tests: move a counter to a target value.

Small enough to reason about every step, but it goes through exactly the same base-class machinery
(task generation and splits, identity, info, step limit) as the built-in environments.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from reharness.envs.base import Task, TextEnv, Transition


class CounterEnv(TextEnv):
    name: ClassVar[str] = "counter"
    env_id: ClassVar[str] = "reharness-test/Counter-v0"
    default_max_steps: ClassVar[int] = 12

    def generate_task(self, split: str, index: int) -> Task:
        def make(rng: random.Random, task_id: str) -> Task:
            start, target = rng.randint(0, 5), rng.randint(0, 9)
            return Task(
                task_id,
                split,
                f"make the counter equal {target}.",
                "reach",
                {"start": start, "target": target},
                {"target": target},
            )

        return self.draw_task(split, index, make)

    def _load(self, task: Task) -> None:
        self.value = int(task.state["start"])
        self.target = int(task.state["target"])

    def _initial_observation(self) -> str:
        assert self.task is not None
        return f"The counter shows {self.value}. Your task is to: {self.task.instruction}"

    def admissible_actions(self) -> list[str]:
        return ["dec", "inc", "look", "submit"]

    def _transition(self, action: str) -> Transition:
        if action == "inc":
            self.value += 1
        elif action == "dec":
            self.value -= 1
        elif action == "submit":
            ok = self.value == self.target
            return Transition("You submit.", reward=float(ok), done=True, success=ok, score=float(ok))
        elif action != "look":
            return Transition("Nothing happens.", invalid=True)
        return Transition(f"The counter shows {self.value}.")

    def expert_action(self) -> str:
        if self.value < self.target:
            return "inc"
        if self.value > self.target:
            return "dec"
        return "submit"

    def runtime_state(self) -> dict[str, Any]:
        return {"value": self.value}
