"""Agents for the Ray executor tests, importable by the Ray workers (the tests put this folder on their
``PYTHONPATH``): a solver slowed by a fixed delay per reply, so that a run can be interrupted mid-way."""

from __future__ import annotations

import asyncio
from typing import Any

from reharness.core.agent import Agent
from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.agents import SolverAgent


class SlowSolver(SolverAgent):
    """The scripted solver, ``delay`` seconds slower per reply. Its trajectories are the solver's (the
    delay changes only timing), so digests compare with ``--agent solver``."""

    def __init__(self, env: Any = None, protocol: str = "text", delay: float = 0.02) -> None:
        super().__init__(env, protocol)
        self.delay = delay

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return SlowSolver(env, protocol, self.delay)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.delay)
        return await super().complete(request)
