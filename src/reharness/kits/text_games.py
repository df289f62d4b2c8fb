"""What the JAR-backed text-game kits share (TextWorldExpress, ScienceWorld): the gold-path solver's
bookkeeping and the one command tool of the tool-calling protocol.

:class:`GoldPathGame` expects the env to keep ``_history`` (the commands played), ``_gold`` (the gold path,
``None`` until asked for), ``_left_gold_at`` and a ``gold_path()`` method that computes the gold path once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The one tool of the text games' tool-calling protocol (Harness-R1's ALFWorld name).
TOOL_NAME = "take_action"


class GoldPathGame:
    """The scripted solver plays the gold path from the start and reports where an episode left it."""

    _history: list[str]
    _gold: list[str] | None
    _left_gold_at: int | None
    #: what the solver does once the gold path is played out
    after_gold = "look around"

    def gold_path(self) -> list[str]:  # pragma: no cover - the env defines it
        raise NotImplementedError

    def _on_gold(self) -> bool:
        assert self._gold is not None
        return self._history == self._gold[: len(self._history)]

    def _gold_report(self) -> dict[str, Any]:
        return {} if self._gold is None else {"gold_path_left_at": self._left_gold_at}

    @property
    def gold_path_left_at(self) -> int | None:
        """The step where the episode left the gold path (None: on it, or the gold path was never asked for).

        Not in ``runtime_state`` on purpose: hooks must not learn whether the agent is on the gold path."""
        return self._left_gold_at

    def expert_action(self) -> str:
        gold = self.gold_path()
        position = len(self._history)
        return gold[position] if position < len(gold) else self.after_gold

    def command_tool(self, description: str) -> list[dict[str, Any]]:
        """The tool-calling protocol's one tool: ``take_action(action)``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": TOOL_NAME,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": {"action": {"type": "string", "description": "the command text"}},
                        "required": ["action"],
                        "additionalProperties": False,
                    },
                },
            }
        ]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name != TOOL_NAME:
            game = getattr(self, "name", "this game")
            raise ValueError(f"{game} has one tool, {TOOL_NAME!r}; got a call to {name!r}")
        action = arguments.get("action") if isinstance(arguments, Mapping) else None
        if not isinstance(action, str) or not action.strip():
            raise ValueError(f"{TOOL_NAME} needs a non-empty string argument 'action', got {arguments!r}")
        return action

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return TOOL_NAME, {"action": action}
