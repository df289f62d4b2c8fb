"""A plain gymnasium text environment with no reharness kit: guess a 3-digit code one digit at a time.

Registered with gymnasium as ``plain_keypad/Keypad-v0`` when imported, so reharness runs it as
``--env gym:keypad_env:plain_keypad/Keypad-v0``. It reports the conventional ``info`` keys only
(``admissible_commands``, ``won``, ``task``), and ``press N`` where N is not on the keypad is the
environment's own invalid action (``info["invalid_action"]`` is left out on purpose: the adapter infers it
from the admissible list).
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
from gymnasium import spaces

CHARSET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?'-_()\n"


class KeypadEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium convention

    def __init__(self) -> None:
        self.observation_space = spaces.Text(max_length=500, charset=CHARSET)
        self.action_space = spaces.Text(max_length=100, charset=CHARSET)
        self.code: list[int] = []
        self.entered: list[int] = []

    def _info(self) -> dict[str, Any]:
        return {
            "admissible_commands": [f"press {d}" for d in range(10)] + ["clear"],
            "won": self.entered == self.code,
            "task": "Open the door: the code has three digits; the display says which are right so far.",
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        rng = random.Random(seed)
        self.code = [rng.randrange(10) for _ in range(3)]
        self.entered = []
        return "A keypad with digits 0-9 and a clear key. The display is empty.", self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        words = action.strip().lower().split()
        if words == ["clear"]:
            self.entered = []
            return "The display is empty.", 0.0, False, False, self._info()
        if len(words) == 2 and words[0] == "press" and words[1].isdigit() and len(words[1]) == 1:
            self.entered.append(int(words[1]))
            right = sum(a == b for a, b in zip(self.entered, self.code, strict=False))
            if self.entered == self.code:
                return "The door opens.", 1.0, True, False, self._info()
            if len(self.entered) >= 3:
                self.entered = []
                return f"Wrong code ({right} right). The display clears.", 0.0, False, False, self._info()
            return (
                f"Display: {len(self.entered)} digit(s), {right} right so far.",
                0.0,
                False,
                False,
                self._info(),
            )
        return "Nothing happens.", 0.0, False, False, self._info()

    def expert_action(self) -> str:
        if self.entered != self.code[: len(self.entered)]:
            return "clear"
        return f"press {self.code[len(self.entered)]}"


gymnasium.register(id="plain_keypad/Keypad-v0", entry_point=KeypadEnv, max_episode_steps=20)
