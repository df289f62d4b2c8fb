"""Chat-level types shared by agents, model backends and the harness runtime.

An *agent* (the policy) is anything that answers a :class:`ChatRequest` with a :class:`ChatResponse`;
these pydantic models are the one wire format between the runtime and every backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """An OpenAI-style function call proposed by the model."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


class SamplingParams(BaseModel):
    """Sampling parameters of one request; ``seed`` makes sampling reproducible."""

    model_config = ConfigDict(frozen=True)

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(512, gt=0)


class ChatRequest(BaseModel):
    """What the harness asks the policy at one decision point."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] = ()
    sampling: SamplingParams = SamplingParams()
    seed: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: ``viable(reply_so_far, final) -> bool``: in-process decoders (``hf:``/``tiny:``) draw only tokens
    #: that keep it true (e.g. a repair program's grammar); remote backends ignore it. Not serialised.
    constraint: Callable[[str, bool], bool] | None = Field(default=None, exclude=True, repr=False)
    #: ``complete(reply_so_far) -> bool``: the reply holds a whole action (the protocol's parse-complete
    #: check); a backend told to end replies there (``end_at_action``) stops decoding. Not serialised.
    complete: Callable[[str], bool] | None = Field(default=None, exclude=True, repr=False)


class ChatResponse(BaseModel):
    """The policy's answer: text and/or tool calls, plus token data when a backend can give it."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_token_ids: tuple[int, ...] | None = None
    completion_token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    prompt_tokens: int | None = Field(
        None, description="Prompt length in tokens as the server reports it (``usage.prompt_tokens``)."
    )
    error: str | None = None
    attempts: int = Field(1, ge=0, description="Requests sent for this reply (retries + 1; 0: replayed).")
    retry_waits_s: tuple[float, ...] = Field((), description="Seconds waited before each retry.")
    retry_errors: tuple[str, ...] = Field((), description="Why each retried attempt failed.")
    replayed: bool = Field(False, description="A recorded reply reused instead of calling the model.")
