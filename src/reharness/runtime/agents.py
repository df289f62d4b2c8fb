"""The scripted agents (policies that need no model) and :class:`FunctionAgent`.

The interface :class:`Agent` lives in :mod:`reharness.core.agent` (re-exported here), so the model
backends implement it without importing the runtime; agent specs (a scripted agent's name or a backend
spec) are resolved by :func:`reharness.runtime.agent_specs.make_agent`. The scripted agents:

- ``solver``: the environment's state-based expert, rendered in the harness protocol;
- ``random``: uniform over admissible actions, or a random well-formed action;
- ``gold``: for loaded real DBBench tasks, plays the reference SQL for mutations and the reference answer
  for select types.

Scripted agents read the environment (privileged), so :meth:`Agent.start_episode` binds one per episode;
chat-only agents just return themselves.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Protocol, cast

from reharness.core.agent import Agent
from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import UnknownNameError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs.registry import data_loading_kits
from reharness.runtime.protocols import render_action


class _GoldEnv(Protocol):
    """An environment with reference solutions (real task files: ``gold_action``)."""

    def gold_action(self) -> str: ...


class _ScriptedAgent(Agent):
    """Base of agents that act from the environment's state instead of the messages."""

    def __init__(self, env: TextEnvLike | None = None, protocol: str = "text") -> None:
        self.env = env
        self.protocol = protocol

    @property
    def episode_env(self) -> TextEnvLike:
        """The episode's environment (an agent used outside an episode has none: an error)."""
        if self.env is None:
            raise RuntimeError(f"{self.policy_id} agent used outside an episode; call start_episode first")
        return self.env

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        return type(self)(env, protocol)

    def choose(self, request: ChatRequest) -> str:
        raise NotImplementedError

    async def complete(self, request: ChatRequest) -> ChatResponse:
        env = self.episode_env
        return render_action(self.protocol, self.choose(request), env)


class SolverAgent(_ScriptedAgent):
    """The environment's scripted solver (its state-based expert)."""

    policy_id = "solver"

    def choose(self, request: ChatRequest) -> str:
        return str(self.episode_env.expert_action())


class RandomAgent(_ScriptedAgent):
    """Uniform over admissible actions, or a random well-formed action; seeded by the request seed."""

    policy_id = "random"

    def choose(self, request: ChatRequest) -> str:
        return str(self.episode_env.random_action(random.Random(request.seed)))


class GoldAgent(_ScriptedAgent):
    """Plays the reference solution of loaded real tasks (the env's ``gold_action``: e.g. a real task file's
    reference statements, then its label)."""

    policy_id = "gold"

    def check_env(self, env: TextEnvLike) -> None:
        if not hasattr(env, "gold_action"):
            raise UnknownNameError(
                f"the gold agent needs an env with reference solutions; {type(env).__name__} has none",
                hint="use --agent gold with --data FILE on a kit that loads real task files "
                f"({', '.join(data_loading_kits())}), or --agent solver",
            )

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        self.check_env(env)
        return GoldAgent(env, protocol)

    def choose(self, request: ChatRequest) -> str:
        return str(cast(_GoldEnv, self.episode_env).gold_action())  # check_env: it has gold_action


class FunctionAgent(Agent):
    """Wrap a function ``fn(request) -> str | ChatResponse`` (sync or async) as an agent.

    Useful for scripted model replies in tests and notebooks; strings are treated as the reply text.
    """

    def __init__(
        self,
        fn: Callable[[ChatRequest], str | ChatResponse | Awaitable[str | ChatResponse]],
        policy_id: str = "function",
    ) -> None:
        self.fn = fn
        self.policy_id = policy_id

    async def complete(self, request: ChatRequest) -> ChatResponse:
        result = self.fn(request)
        if isinstance(result, Awaitable):
            result = await result
        return result if isinstance(result, ChatResponse) else ChatResponse(text=str(result))


SCRIPTED_AGENTS: dict[str, type[Agent]] = {"solver": SolverAgent, "random": RandomAgent, "gold": GoldAgent}
