"""A scripted target with a systematic, repairable failure, for evolution tests (a real agent, no model).

:class:`TypoSolver` plays the household expert, but on the tasks of some types writes each command with the
space before the object number dropped (``go to cabinet1``): the environment answers "Nothing happens.", the
episode runs out of steps, and a sibling that snaps near-miss commands to the admissible list rescues it.
"""

from __future__ import annotations

import re

from reharness.core.types import ChatRequest
from reharness.runtime import SolverAgent

_NUMBER = re.compile(r" (\d+)\b")


class TypoSolver(SolverAgent):
    policy_id = "typo-solver"
    #: task types (household) on which the agent garbles its commands
    garbled = ("clean", "heat", "cool")

    def choose(self, request: ChatRequest) -> str:
        action = super().choose(request)
        task_type = str(getattr(self.env, "task", None) and self.env.task.task_type)
        if any(word in task_type for word in self.garbled):
            return _NUMBER.sub(r"\1", action)
        return action
