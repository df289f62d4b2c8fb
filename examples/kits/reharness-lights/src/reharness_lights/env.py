"""Lights: a row of lamps, a target pattern; ``toggle N`` flips lamp N, ``look`` shows the row, ``done`` ends.

A plain gymnasium environment with text observations and actions. It reports the conventional ``info`` keys
reharness reads (``admissible_commands``, ``won``, ``score``, ``task``, ``task_type``) and has a scripted
solver (``expert_action``), so it runs with no kit as ``--env gym:reharness_lights.env:Lights-v0``.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
from gymnasium import spaces

CHARSET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?'-_[]()#/\n"


class LightsEnv(gymnasium.Env[str, str]):
    """Match the lamps to the target pattern, then say ``done`` (``done`` too early fails the task)."""

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium convention

    def __init__(self, lamps: int = 5) -> None:
        self.lamps = lamps
        self.observation_space = spaces.Text(max_length=2000, charset=CHARSET)
        self.action_space = spaces.Text(max_length=200, charset=CHARSET)
        self.state: list[bool] = []
        self.target: list[bool] = []

    def _row(self, values: list[bool]) -> str:
        return " ".join("on" if v else "off" for v in values)

    def _info(self) -> dict[str, Any]:
        commands = [f"toggle {i + 1}" for i in range(self.lamps)] + ["look", "done"]
        return {
            "admissible_commands": commands,
            "won": self.state == self.target and self.finished,
            "score": sum(a == b for a, b in zip(self.state, self.target, strict=True)) / self.lamps
            if self.finished
            else 0.0,
            "task": f"Make the lamps show: {self._row(self.target)}. Then say done.",
            "task_type": "even" if sum(self.target) % 2 == 0 else "odd",
            "mismatched": sum(a != b for a, b in zip(self.state, self.target, strict=True)),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        rng = random.Random(seed)
        self.state = [rng.random() < 0.5 for _ in range(self.lamps)]
        self.target = [rng.random() < 0.5 for _ in range(self.lamps)]
        if self.state == self.target:
            self.target[0] = not self.target[0]
        self.finished = False
        return f"You see {self.lamps} lamps: {self._row(self.state)}.", self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        words = action.strip().lower().split()
        if words == ["done"]:
            self.finished = True
            won = self.state == self.target
            return ("Well done." if won else "The lamps do not match."), float(won), True, False, self._info()
        if words == ["look"]:
            return f"The lamps: {self._row(self.state)}.", 0.0, False, False, self._info()
        if (
            len(words) == 2
            and words[0] == "toggle"
            and words[1].isdigit()
            and 1 <= int(words[1]) <= self.lamps
        ):
            i = int(words[1]) - 1
            self.state[i] = not self.state[i]
            return f"Lamp {i + 1} is now {'on' if self.state[i] else 'off'}.", 0.0, False, False, self._info()
        return "Nothing happens.", 0.0, False, False, self._info() | {"invalid_action": True}

    def expert_action(self) -> str:
        for i, (a, b) in enumerate(zip(self.state, self.target, strict=True)):
            if a != b:
                return f"toggle {i + 1}"
        return "done"


gymnasium.register(id="reharness_lights/Lights-v0", entry_point=LightsEnv, max_episode_steps=20)
