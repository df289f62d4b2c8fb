"""Paths and the near-miss household agent the viewer's tests use (imported by ``conftest`` and the tests)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.agents import Agent
from reharness.runtime.protocols import render_action

ROOT = Path(__file__).resolve().parents[2]
POOL = ROOT / "docs" / "results" / "pool-shop"
TRAINING = ROOT / "docs" / "results" / "policy-household" / "train-seed1"


class NearMissSolver(Agent):
    """The household expert that, with a seeded 60 % chance per step, writes a near-miss command."""

    policy_id = "near-miss"

    def __init__(self, env: Any = None, protocol: str = "text") -> None:
        self.env, self.protocol = env, protocol

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return NearMissSolver(env, protocol)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        action = str(self.env.expert_action())
        if random.Random(request.seed).random() < 0.6 and " " in action:
            verb, rest = action.split(" ", 1)
            action = "go to the " + rest[3:] if verb == "go" else f"{verb} the {rest}"
        return render_action(self.protocol, action, self.env)
