"""The failure packet's data model (pydantic), shared by extraction (:mod:`.packets`) and rendering
(:mod:`.render`) so that neither imports the other's module for its types."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from reharness.patches.leakage import LeakageEvidence

PACKET_SCHEMA = "reharness-failure-packet-v1"


class TraceStep(BaseModel):
    """One decision of a trace, trimmed and masked."""

    model_config = ConfigDict(extra="forbid")

    step: int
    source: str
    reply: str = Field("", description="The policy's reply (tool calls rendered as name(arguments)).")
    action: str | None = Field(None, description="The executed action when it differs from the parsed one.")
    observation: str = ""
    flags: list[str] = Field(default_factory=list)
    note: str | None = Field(None, description="Parse error or hook errors of the step.")


class PacketTrace(BaseModel):
    """One failed episode: identity (JSON only), outcome, codes, signals and transcript."""

    model_config = ConfigDict(extra="forbid")

    position: int
    run_id: str
    episode_index: int
    task_id: str
    task_identity: str
    task_type: str
    instruction: str
    reward: float
    termination: str
    turns: int
    failure_codes: list[str]
    evidence: dict[str, list[int]]
    signals: dict[str, int | float]
    initial_observation: str
    transcript: list[TraceStep]
    masked: dict[str, int]


class TaskReward(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_index: int
    task_id: str
    task_identity: str
    reward: float
    success: bool


class PacketRow(BaseModel):
    """Metadata of the batch the packet was drawn from (the whole batch, successes included)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    source_run: str
    batch_size: int
    baseline_pass_rate: float
    baseline_mean_reward: float
    task_rewards: list[TaskReward]
    target_policy: str
    harness_id: str


class PacketHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: str = PACKET_SCHEMA
    benchmark: str
    source_run: str
    failures_found: int
    failures_included: int
    strategy: str
    max_traces: int
    token_budget: int
    approx_tokens: int = 0
    obs_chars: int
    reply_chars: int
    code_counts: dict[str, int] = Field(description="Episodes per failure code among all failures found.")
    instructions: list[str]


class LeakageFacts(BaseModel):
    """Task-specific facts of the included traces that a patch must not copy (never rendered)."""

    model_config = ConfigDict(extra="forbid")

    task_ids: list[str] = Field(default_factory=list)
    product_ids: list[str] = Field(default_factory=list)
    object_instances: list[str] = Field(default_factory=list)


class FailurePacket(BaseModel):
    model_config = ConfigDict(extra="forbid")

    header: PacketHeader
    row: PacketRow
    traces: list[PacketTrace]
    leakage: LeakageFacts

    def to_json(self, indent: int | None = 2) -> str:
        """Canonical JSON: sorted keys, so the same packet is always the same bytes."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=indent, ensure_ascii=False)

    def leakage_evidence(self) -> LeakageEvidence:
        """The facts as :class:`reharness.patches.leakage.LeakageEvidence` (product ids count as ids)."""
        from reharness.patches.leakage import LeakageEvidence

        facts = self.leakage
        return LeakageEvidence(
            task_ids=[*facts.task_ids, *facts.product_ids], object_instances=facts.object_instances
        )
