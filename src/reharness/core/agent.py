"""The agent (policy) interface: anything that answers a chat request with text or tool calls.

It lives in ``core`` so that the runtime (which drives agents) and the model backends (which implement
them) both import it from below, and neither imports the other for it. Scripted agents are in
:mod:`reharness.runtime.agents`; model backends in :mod:`reharness.models`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatRequest, ChatResponse


class Agent(ABC):
    """A policy. ``policy_id`` names it in trajectories; ``complete`` answers one request."""

    policy_id: str = "agent"

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        """Return the agent that plays one episode (scripted agents bind to ``env`` here)."""
        return self

    def check_env(self, env: TextEnvLike) -> None:  # noqa: B027 - optional
        """Raise a clear error when this agent cannot play ``env`` at all; called once per batch before
        anything is written, so an incompatible agent leaves no run directory or index row behind."""

    @abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one chat request."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Release resources (HTTP pools, models)."""
