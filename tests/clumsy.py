"""Test helper: a real small target that fails systematically, and the patch that rescues it.

:class:`ClumsySolver` is the household expert with a seeded 60 % chance per step of writing a near-miss
command ("take the mug 1 from …"), which the env rejects ("Nothing happens"). With a tight step limit
(``CONFIG``: 12 steps) it fails systematically, and ``SNAP``
(``examples/patches/household_snap_to_admissible.yaml``: snap near-misses to the closest admissible command)
measurably rescues it. Shared by the measurement, engineer and training tests (``tests`` is on pytest's
``pythonpath``).
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from reharness.core.types import ChatRequest, ChatResponse
from reharness.patches import Patch, load_patch
from reharness.runtime import RunSpec, base_harness_config
from reharness.runtime.agents import Agent
from reharness.runtime.protocols import render_action

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "patches"
SNAP = load_patch(EXAMPLES / "household_snap_to_admissible.yaml")
CONFIG = base_harness_config("household").model_copy(update={"step_limit": 12})
SPEC = RunSpec(env="household", agent="clumsy", split="train", n=12, seed=0, concurrency=4)


class ClumsySolver(Agent):
    """The household expert with seeded near-miss commands; hangs when the context asks it to.

    ``calls`` (shared by the per-episode copies) counts the requests it answered; ``delay`` seconds pass
    before each answer (a slow model, for timeouts and kills part-way).
    """

    policy_id = "clumsy"

    def __init__(
        self, env: Any = None, protocol: str = "text", calls: list[int] | None = None, delay: float = 0.0
    ) -> None:
        self.env, self.protocol, self.delay = env, protocol, delay
        self.calls = calls if calls is not None else [0]

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return ClumsySolver(env, protocol, self.calls, self.delay)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self.delay:
            await asyncio.sleep(self.delay)
        self.calls[0] += 1
        if "PLEASE HANG" in request.messages[-1].content:
            await asyncio.Event().wait()
        action = str(self.env.expert_action())
        if random.Random(request.seed).random() < 0.6 and " " in action:
            verb, rest = action.split(" ", 1)
            action = "go to the " + rest[3:] if verb == "go" else f"{verb} the {rest}"
        return render_action(self.protocol, action, self.env)


def hook_patch(point: str, body: str, description: str = "test patch") -> Patch:
    return Patch({point: "def hook(ctx, nb):\n" + body}, description, "household")
