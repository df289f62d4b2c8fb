"""Versioned, typed trajectory records.

``reharness-trajectory-v1``: an :class:`EpisodeRecord` holds every step (context digest, raw policy output,
parsed and executed action, hook effects and hook errors, observation, reward, flags) plus the identities of
the task, harness and policy that produced it; :class:`RunMeta` holds the resolved run configuration.
Wall-clock fields (``duration_s``, ``created``) are excluded from :func:`trajectory_digest`, so two identical
runs have the same digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.hashing import stable_hash
from reharness.core.types import ToolCall

SCHEMA_VERSION = "reharness-trajectory-v1"


class PolicyOutput(BaseModel):
    """The policy's reply at one step, with how it was obtained (retries, or replayed from a baseline).

    The fields after ``logprobs`` were added later with defaults, so older trajectory files still load.
    """

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    error: str | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    attempts: int = Field(1, ge=0, description="Requests sent for this reply (retries + 1; 0: replayed).")
    retry_waits_s: list[float] = Field(default_factory=list, description="Seconds waited before each retry.")
    retry_errors: list[str] = Field(default_factory=list, description="Why each retried attempt failed.")
    replayed: bool = Field(False, description="Reused from the baseline's prefix; no model call was made.")
    prompt_tokens: int | None = Field(None, description="Prompt length in tokens, when the backend says.")


class HookErrorRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    point: str
    overlay: str
    error_type: str
    message: str


class StepRecord(BaseModel):
    """One decision of the harness (a policy call, or an action forced by a hook)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    source: Literal["policy", "hook"] = "policy"
    context_digest: str | None = None
    output: PolicyOutput | None = None
    parsed_action: str | None = None
    parse_error: str | None = None
    action: str | None = Field(None, description="The action executed in the env (None if none was).")
    effects: list[dict[str, Any]] = Field(default_factory=list)
    dropped_effects: list[dict[str, Any]] = Field(default_factory=list)
    hook_errors: list[HookErrorRecord] = Field(default_factory=list)
    observation: str = ""
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    flags: list[str] = Field(default_factory=list, description="e.g. invalid_action, format_error, blocked.")
    duration_s: float = 0.0


class EpisodeRecord(BaseModel):
    """One episode with its full trajectory."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    run_id: str
    episode_index: int
    seed: int
    env: str
    task_id: str
    task_identity: str
    task_type: str
    instruction: str
    initial_observation: str
    harness_id: str
    policy_id: str
    success: bool = False
    score: float = 0.0
    total_reward: float = 0.0
    num_steps: int = 0
    termination: Literal["success", "terminated", "step_limit", "error"] = "step_limit"
    error: str | None = None
    failure_codes: list[str] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    duration_s: float = 0.0

    def digest_payload(self) -> dict[str, Any]:
        return {
            "task_identity": self.task_identity,
            "initial_observation": self.initial_observation,
            "steps": [(s.source, s.action, s.parsed_action, s.observation, s.reward) for s in self.steps],
            "success": self.success,
        }


class RunMeta(BaseModel):
    """Metadata of a run, written once as ``run.json``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    run_id: str
    config_hash: str
    created: str
    package_version: str
    env: str
    policy_id: str
    harness: dict[str, Any]
    seed: int
    n: int
    config: dict[str, Any]


InfraError = Literal["policy", "env"]


def infrastructure_error(episode: EpisodeRecord) -> InfraError | None:
    """``"policy"`` / ``"env"`` when the episode ended in an infrastructure error, not an agent failure.

    A policy error is a request that got no usable reply (the server was down, refused the key, kept
    failing); an env error is an environment that raised. Either says nothing about the agent, so such
    episodes are reported apart and can be run again (``--retry-errors``).
    """
    if episode.termination != "error":
        return None
    last = episode.steps[-1] if episode.steps else None
    if last is not None and "env_error" in last.flags:
        return "env"
    if (episode.error or "").startswith("env error"):
        return "env"
    return "policy"


def trajectory_digest(episodes: Iterable[EpisodeRecord]) -> str:
    """Hash over the tasks' identities, actions and observations, in episode order."""
    ordered = sorted(episodes, key=lambda e: e.episode_index)
    return stable_hash([e.digest_payload() for e in ordered], length=32)


def first_infrastructure_error(episodes: Sequence[EpisodeRecord], limit: int = 400) -> str | None:
    """The error of the first episode that ended in an infrastructure error, if any (cut to ``limit``)."""
    found = next((e.error for e in episodes if infrastructure_error(e) is not None and e.error), None)
    return None if found is None else found[:limit]
