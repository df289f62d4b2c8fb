"""Harness-R1's ALFWorld ``ctx`` for ScienceWorld (:class:`~reharness.kits.text_games.TextGameAdapter`).

ScienceWorld names the room ``This room is called the kitchen.`` (``You move to the kitchen.`` after a
``go to``), the rooms beyond its doors ``A door to the hallway (that is open)``, answers ``inventory`` with
``In your inventory, you see: …`` and a command it cannot match with ``No known action matches that
input.`` (ALFWorld: ``Nothing happens.``). ``task.task_type`` is the task family (``boil``, ``melt``, …).
The world snapshot also says whether a disambiguation menu is open (``awaiting_choice``): the game then
waits for the number of the intended action, which is not in the valid-action list.

The valid-action list costs about 0.1 s to build, so the environment builds it only when asked (its module
docstring); this adapter asks once per step, the first time a hook's ctx needs it, unless the harness
already lists it in every ``info``.
"""

from __future__ import annotations

import re
from typing import Any

from reharness.kits.text_games import TextGameAdapter
from reharness.runtime.r1.adapter import Proposal

#: how the JAR opens a disambiguation menu
AMBIGUOUS = "ambiguous request"


class ScienceWorldAdapter(TextGameAdapter):
    """ALFWorld's ctx shape for ScienceWorld."""

    room_pattern = re.compile(r"(?:this room is called the|you move to the) ([a-z -]+)\.")
    exit_pattern = re.compile(r"a door to the ([a-z -]+) \(that is")
    inventory_prefix = "in your inventory"
    invalid_markers = ("no known action matches", "unknown action")

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        valid_actions = getattr(self.env, "valid_actions", None)
        if not self.admissible and callable(valid_actions):  # each step's info resets it to the harness's
            self.admissible = list(valid_actions())
        return super().ctx(hook, step, proposal)

    def world(self) -> dict[str, Any]:
        return super().world() | {"awaiting_choice": self.observation.lower().startswith(AMBIGUOUS)}
