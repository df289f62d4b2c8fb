"""Helpers for the failures tests: run real episodes of the built-in envs with scripted agents."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs.registry import make_env
from reharness.runtime import Agent, EpisodeRunner, FunctionAgent, Harness, base_harness_config
from reharness.runtime.overlay import Overlay
from reharness.store.records import EpisodeRecord


def harness(env: str, overlays: tuple[Overlay, ...] = (), **fields: Any) -> Harness:
    """The env's base harness with some fields replaced (``step_limit``, ``protocol``, ...)."""
    return Harness(base_harness_config(env).model_copy(update=fields), overlays)


def episode(env_name: str, agent: Agent, task: int = 0, seed: int = 0, **fields: Any) -> EpisodeRecord:
    """One real episode of ``env_name`` (test split) under its base harness with ``fields`` changed."""
    env = make_env(env_name, split="test")
    try:
        runner = EpisodeRunner(env, agent, harness(env_name, **fields))
        return asyncio.run(runner.run(env.get_task(task), seed))
    finally:
        env.close()


def replies(*items: str | ChatResponse, then: str | ChatResponse = "Action: look") -> FunctionAgent:
    """An agent answering with ``items`` in turn, then ``then`` forever."""
    queue = list(items)
    return FunctionAgent(lambda request: queue.pop(0) if queue else then, policy_id="scripted")


class Steered(Agent):
    """The env's expert, with each expert action passed through ``steer(env, action)`` first."""

    policy_id = "steered"

    def __init__(self, steer: Callable[[Any, str], str], env: Any = None) -> None:
        self.steer = steer
        self.env = env

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return Steered(self.steer, env)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="Action: " + self.steer(self.env, self.env.expert_action()))


def find_task(env_name: str, predicate: Callable[[Any], bool], limit: int = 200) -> int:
    """Index of the first test-split task satisfying ``predicate``."""
    env = make_env(env_name, split="test")
    for i in range(limit):
        if predicate(env.get_task(i)):
            return i
    raise AssertionError(f"no {env_name} task in the first {limit} matches")


def sql(statement: str) -> str:
    return f"Action: Operation\n```sql\n{statement}\n```"


def answer(value: str) -> str:
    return f"Action: Answer\nFinal Answer: {value}"
