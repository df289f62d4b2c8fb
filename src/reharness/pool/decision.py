"""What the router sees and decides: a failed group's features, and the decision record with its JSONL log.

:func:`group_context` reads one failed group (the K episodes of one task under H0): its failure codes, the
cluster mix (the share of the group's failures in each direction's cluster), and features — the failing
action kind, error types, context length and steps, repeat counts and the policy's confidence (mean token
log-probability, where the records carry log-probabilities). :class:`RouteDecision` is one routing
decision; :class:`DecisionLog` appends each decision, and later its outcome, as one JSON line flushed at once.
The log is append-only: an outcome is a separate ``{"type": "outcome", ...}`` line naming the decision id,
so an interrupted log still parses (:func:`read_log` skips a torn last line and merges outcomes).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import DataError
from reharness.core.jsonl import jsonl_lines
from reharness.failures.evidence import action_key, executed
from reharness.pool.directions import Direction
from reharness.pool.profile import OTHER, cluster_keys
from reharness.store.records import EpisodeRecord

Strategy = Literal["validation", "profile", "vote", "random", "oracle"]
#: The routing strategies' names (their classes: :mod:`reharness.pool.strategies`).
STRATEGIES: tuple[str, ...] = ("validation", "profile", "vote", "random", "oracle")


class GroupFeatures(BaseModel):
    """Features of a failed group (or, for Rank-1, of a task before acting)."""

    model_config = ConfigDict(extra="forbid")

    action_kind: str | None = Field(
        None, description="Most common kind of the last decision (verb/unparsed)."
    )
    error_types: dict[str, int] = Field(default_factory=dict, description="Step flags and hook error types.")
    mean_steps: float = 0.0
    mean_context_chars: float = Field(0.0, description="Instruction + observations, characters per episode.")
    repeated_actions: int = 0
    repeated_observations: int = 0
    instruction_chars: int = 0
    confidence: float | None = Field(None, description="Mean token log-probability, where recorded.")


class RouteContext(BaseModel):
    """Everything the strategies and judges read about one group (or one task, for Rank-1)."""

    model_config = ConfigDict(extra="forbid")

    env: str
    task_id: str
    task_identity: str
    task_type: str
    instruction: str
    group_size: int = 0
    failure_codes: dict[str, int] = Field(default_factory=dict)
    cluster_mix: dict[str, float] = Field(default_factory=dict, description="Cluster key → share, sums to 1.")
    features: GroupFeatures = Field(default_factory=GroupFeatures)

    def dominant_code(self) -> str | None:
        if not self.failure_codes:
            return None
        return min(self.failure_codes.items(), key=lambda kv: (-kv[1], kv[0]))[0]


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sibling_id: str
    name: str
    direction: str
    score: float
    reason: str


class JudgeVote(BaseModel):
    """One judge's vote: a ranking of candidate ids (first = its vote), or an abstention (empty)."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    ranking: list[str] = Field(default_factory=list)
    reason: str = ""
    calls: int = 0
    tokens: int = 0
    error: str | None = None

    @property
    def vote(self) -> str | None:
        return self.ranking[0] if self.ranking else None


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sibling_id: str
    successes: int = Field(ge=0)
    attempts: int = Field(gt=0)


class RouteDecision(BaseModel):
    """One routing decision (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["decision"] = "decision"
    decision_id: str
    kind: Literal["group", "rank1"] = "group"
    env: str
    task_id: str
    task_identity: str
    task_type: str
    group_size: int
    failure_codes: dict[str, int]
    cluster_mix: dict[str, float]
    features: GroupFeatures
    strategy: str
    aggregation: str | None = None
    candidates: list[Candidate]
    votes: list[JudgeVote] = Field(default_factory=list)
    choice: list[str] = Field(description="Sibling ids to try, best first (Rank-1: one id, or empty = H0).")
    model_calls: int = 0
    tokens: int = 0
    outcome: list[Outcome] = Field(default_factory=list)


class OutcomeLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["outcome"] = "outcome"
    decision_id: str
    outcome: Outcome


def group_context(group: Sequence[EpisodeRecord], directions: Sequence[Direction]) -> RouteContext:
    """The :class:`RouteContext` of one failed group (all episodes of one task)."""
    if not group:
        raise DataError("an empty group cannot be routed", hint="pass the K episodes of one task under H0")
    first = group[0]
    tasks = {r.task_id for r in group}
    if len(tasks) > 1:
        raise DataError(f"a group holds episodes of one task, got tasks {sorted(tasks)}")
    codes: Counter[str] = Counter()
    mix: dict[str, float] = {}
    for record in group:
        if record.success:
            continue
        codes.update(record.failure_codes)
        keys = cluster_keys(record.failure_codes, directions)
        for key in keys:
            mix[key] = mix.get(key, 0.0) + 1 / len(keys)  # a failure in several clusters splits
    total = sum(mix.values())
    cluster_mix = {k: round(v / total, 6) for k, v in sorted(mix.items())} if total else {OTHER: 1.0}
    return RouteContext(
        env=first.env,
        task_id=first.task_id,
        task_identity=first.task_identity,
        task_type=first.task_type,
        instruction=first.instruction,
        group_size=len(group),
        failure_codes=dict(sorted(codes.items())),
        cluster_mix=cluster_mix,
        features=group_features(group),
    )


def _kind(record: EpisodeRecord) -> str | None:
    if not record.steps:
        return None
    last = record.steps[-1]
    if last.action is None and last.parse_error:
        return "unparsed"
    text = last.action or last.parsed_action or ""
    key = action_key(record.env, text).split()
    return key[0].split("[")[0].lower() if key else None


def group_features(group: Sequence[EpisodeRecord]) -> GroupFeatures:
    """Features of a group of episodes (see :class:`GroupFeatures`); one pass over the steps."""
    kinds: Counter[str] = Counter(k for k in (_kind(r) for r in group) if k)
    errors: dict[str, int] = {}
    logprob_sum, logprob_n = 0.0, 0
    repeated_actions = repeated_obs = chars = 0
    for record in group:
        seen: set[str] = set()
        previous: str | None = None
        chars += len(record.instruction) + len(record.initial_observation)
        for step in record.steps:
            for flag in step.flags:
                if flag != "forced":
                    errors[flag] = errors.get(flag, 0) + 1
            for err in step.hook_errors:
                errors[err.error_type] = errors.get(err.error_type, 0) + 1
            if executed(step):
                key = action_key(record.env, step.action or "")
                repeated_actions += key == previous
                previous = key
            obs = step.observation.strip()
            repeated_obs += obs in seen
            seen.add(obs)
            chars += len(step.observation)
            if step.output is not None and step.output.logprobs:
                logprob_sum += sum(step.output.logprobs)
                logprob_n += len(step.output.logprobs)
        if record.error:
            errors["episode_error"] = errors.get("episode_error", 0) + 1
    n = len(group)
    return GroupFeatures(
        action_kind=min(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[0] if kinds else None,
        error_types=dict(sorted(errors.items())),
        mean_steps=sum(r.num_steps for r in group) / n if n else 0.0,
        mean_context_chars=chars / n if n else 0.0,
        repeated_actions=repeated_actions,
        repeated_observations=repeated_obs,
        instruction_chars=len(group[0].instruction) if group else 0,
        confidence=logprob_sum / logprob_n if logprob_n else None,
    )


class DecisionLog:
    """An append-only JSONL decision log; every line is flushed when written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, item: RouteDecision | OutcomeLine) -> None:
        self._file.write(json.dumps(item.model_dump(mode="json"), sort_keys=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_log(path: str | Path) -> list[RouteDecision]:
    """The decisions of a log, outcomes merged in; a torn last line (an interrupted write) is skipped."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"decision log {file} does not exist", hint="pass the --log file the router wrote")
    decisions: dict[str, RouteDecision] = {}
    for number, line in jsonl_lines(file):
        try:
            data = json.loads(line)
            if data.get("type") == "outcome":
                out = OutcomeLine.model_validate(data)
                if out.decision_id not in decisions:
                    raise DataError(f"{file}:{number}: outcome for unknown decision {out.decision_id!r}")
                decisions[out.decision_id].outcome.append(out.outcome)
            else:
                decision = RouteDecision.model_validate(data)
                decisions[decision.decision_id] = decision
        except (json.JSONDecodeError, ValidationError, AttributeError) as exc:
            detail = str(exc).splitlines()[0]
            raise DataError(f"{file}:{number} is not a decision-log line: {detail}") from None
    return list(decisions.values())
