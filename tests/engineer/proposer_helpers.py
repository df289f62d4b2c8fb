"""Helpers for the proposer tests: real episodes of the built-in envs with scripted agents, and packets."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any

from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs.registry import make_env
from reharness.failures import FailurePacket, extract_packet
from reharness.patches import Patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.sandbox.supervisor import SandboxLimits
from reharness.runtime import Agent, EpisodeRunner, Harness, RandomAgent
from reharness.store.records import EpisodeRecord

INPROCESS = SandboxLimits(isolation="inprocess")


class EnvAgent(Agent):
    """An agent answering ``fn(env, request, decision)`` with access to the live env (experts, tables).

    ``decision`` counts the requests of the current episode; ``requests`` logs them all.
    """

    def __init__(self, fn: Callable[[Any, ChatRequest, int], str], env: Any = None, name: str = "env-agent"):
        self.fn = fn
        self.env = env
        self.policy_id = name
        self.requests: list[ChatRequest] = []

    def start_episode(self, env: Any, protocol: str) -> Agent:
        agent = EnvAgent(self.fn, env, self.policy_id)
        agent.requests = self.requests  # one log for every episode of this agent
        return agent

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        self.decision = getattr(self, "decision", -1) + 1
        return ChatResponse(text=self.fn(self.env, request, self.decision))


class Recorder(Agent):
    """Wraps an agent and keeps every request it was sent (across episodes)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.policy_id = "recorded"
        self.requests: list[ChatRequest] = []
        self.active = inner

    def start_episode(self, env: Any, protocol: str) -> Agent:
        self.active = self.inner.start_episode(env, protocol)
        return self

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return await self.active.complete(request)


def episode(
    env_name: str,
    agent: Agent,
    patch: Patch | None = None,
    task: int = 0,
    seed: int = 0,
    split: str = "test",
    limits: SandboxLimits | None = None,
    step_limit: int | None = None,
) -> EpisodeRecord:
    """One real episode under the env's base harness, with ``patch`` in the sandbox when given."""
    env = make_env(env_name, split=split)
    overlay = PatchOverlay(patch, limits) if patch is not None else None
    harness = Harness.base(env_name)
    if step_limit is not None:
        harness = Harness(harness.config.model_copy(update={"step_limit": step_limit}))
    if overlay is not None:
        harness = harness.with_overlays(overlay)

    async def run() -> EpisodeRecord:
        try:
            return await EpisodeRunner(env, agent, harness).run(env.get_task(task), seed)
        finally:
            if overlay is not None:
                await overlay.close()

    try:
        return asyncio.run(run())
    finally:
        env.close()


def sloppy_household(seed: int = 0) -> EnvAgent:
    """Near-misses of admissible commands ('go to the cabinet 1'), sometimes exact ones (the commands come
    from the env, so the agent works whether or not the harness shows them)."""
    rng = random.Random(seed)

    def reply(env: Any, request: ChatRequest, decision: int) -> str:
        options = env.admissible_actions() or ["look"]
        choice = rng.choice(options)
        return "Action: " + (choice.replace("go to ", "go to the ") if rng.random() < 0.7 else choice)

    return EnvAgent(reply, name="sloppy")


def sql(statement: str) -> str:
    return f"Action: Operation\n```sql\n{statement}\n```"


def answer(value: str) -> str:
    return f"Action: Answer\nFinal Answer: {value}"


def packet_of(env_name: str, agents: Sequence[Agent], tasks: Sequence[int] = (0, 1, 2)) -> FailurePacket:
    """The failure packet of real episodes: every agent on every task (test split)."""
    records = []
    for a, agent in enumerate(agents):
        for t in tasks:
            record = episode(env_name, agent, task=t, seed=t)
            records.append(record.model_copy(update={"episode_index": a * len(tasks) + t, "run_id": "r"}))
    return extract_packet(records)


def random_packet(env_name: str) -> FailurePacket:
    return packet_of(env_name, [RandomAgent()])
