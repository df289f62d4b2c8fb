"""Agents (policies): anything that answers a chat request with text or tool calls.

Model backends (OpenAI-compatible, Hugging Face, tiny models) implement :class:`Agent` in the ``models``
layer. This module provides the interface and the scripted agents that need no model:

- ``solver``: the environment's state-based expert, rendered in the harness protocol;
- ``random``: uniform over admissible actions, or a random well-formed action;
- ``gold``: for loaded real DBBench tasks, plays the reference SQL for mutations and the reference answer
  for select types.

Scripted agents read the environment (privileged), so :meth:`Agent.start_episode` binds one per episode;
chat-only agents just return themselves.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from reharness.core.errors import UnknownNameError, did_you_mean
from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.protocols import render_action


class Agent(ABC):
    """A policy. ``policy_id`` names it in trajectories; ``complete`` answers one request."""

    policy_id: str = "agent"

    def start_episode(self, env: Any, protocol: str) -> Agent:
        """Return the agent that plays one episode (scripted agents bind to ``env`` here)."""
        return self

    def check_env(self, env: Any) -> None:  # noqa: B027 - optional
        """Raise a clear error when this agent cannot play ``env`` at all; called once per batch before
        anything is written, so an incompatible agent leaves no run directory or index row behind."""

    @abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one chat request."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Release resources (HTTP pools, models)."""


class _ScriptedAgent(Agent):
    """Base of agents that act from the environment's state instead of the messages."""

    def __init__(self, env: Any = None, protocol: str = "text") -> None:
        self.env = env
        self.protocol = protocol

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return type(self)(env, protocol)

    def choose(self, request: ChatRequest) -> str:
        raise NotImplementedError

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self.env is None:
            raise RuntimeError(f"{self.policy_id} agent used outside an episode; call start_episode first")
        return render_action(self.protocol, self.choose(request), self.env)


class SolverAgent(_ScriptedAgent):
    """The environment's scripted solver (its state-based expert)."""

    policy_id = "solver"

    def choose(self, request: ChatRequest) -> str:
        return str(self.env.expert_action())


class RandomAgent(_ScriptedAgent):
    """Uniform over admissible actions, or a random well-formed action; seeded by the request seed."""

    policy_id = "random"

    def choose(self, request: ChatRequest) -> str:
        return str(self.env.random_action(random.Random(request.seed)))


class GoldAgent(_ScriptedAgent):
    """Plays the reference solution of loaded real tasks (DBBench: reference SQL, then the label)."""

    policy_id = "gold"

    def check_env(self, env: Any) -> None:
        if not hasattr(env, "gold_action"):
            raise UnknownNameError(
                f"the gold agent needs an env with reference solutions; {type(env).__name__} has none",
                hint="use --agent gold with --env db --data FILE.jsonl, or --agent solver",
            )

    def start_episode(self, env: Any, protocol: str) -> Agent:
        self.check_env(env)
        return GoldAgent(env, protocol)

    def choose(self, request: ChatRequest) -> str:
        return str(self.env.gold_action())


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


def make_agent(spec: str, **backend_options: Any) -> Agent:
    """Build an agent from a spec string: ``solver``, ``random``, ``gold``, or a model backend spec
    (``openai:MODEL@BASE_URL``, ``hf:PATH``, ``tiny:NAME``; see :mod:`reharness.models.registry`, which
    receives ``backend_options``)."""
    if spec in SCRIPTED_AGENTS:
        return SCRIPTED_AGENTS[spec]()
    if ":" in spec:  # a model backend: openai:MODEL@URL, hf:PATH, tiny:NAME (heavy imports stay lazy)
        from reharness.models.registry import make_backend

        return make_backend(spec, **backend_options)
    raise _unknown_agent(spec)


def check_agent_spec(spec: str) -> None:
    """Raise the error :func:`make_agent` would raise for a malformed ``spec``, without building or loading
    anything (commands call it before they create any file)."""
    if spec in SCRIPTED_AGENTS:
        return
    if ":" in spec:
        from reharness.models.registry import check_spec

        check_spec(spec)
        return
    raise _unknown_agent(spec)


def _unknown_agent(spec: str) -> UnknownNameError:
    return UnknownNameError(
        f"unknown agent {spec!r}",
        hint=did_you_mean(spec, list(SCRIPTED_AGENTS))
        + "; model backends: openai:MODEL@BASE_URL, hf:PATH, tiny:NAME",
    )
