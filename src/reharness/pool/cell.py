"""One cell of a behaviour profile: paired-outcome counts, a Wilson interval, and observed behaviour.

See :mod:`reharness.pool.profile` for what a cell is counted over (a sibling × a failure cluster, or a
sibling × a task type). Rates are derived fields: written to ``profile.json`` for readers, recomputed
(not read back) on load.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from reharness.failures.evidence import action_key, executed
from reharness.store.records import EpisodeRecord

_Z95 = NormalDist().inv_cdf(0.975)
_DERIVED = frozenset(
    {"rescue_rate", "rescue_ci", "break_rate", "success_rate", "invalid_rate", "repeat_rate", "mean_steps"}
)


def wilson(successes: int, trials: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); ``(0, 1)`` with no trials."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


class ProfileCell(BaseModel):
    """Counts of one (sibling, cluster or task type) cell, and the behaviour observed under the sibling."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(0, ge=0, description="Paired episodes counted here.")
    h0_failures: int = Field(0, ge=0, description="Of those, how many failed under H0.")
    rescues: int = Field(0, ge=0, description="Failed under H0, succeeded under the sibling.")
    breaks: int = Field(0, ge=0, description="Succeeded under H0, failed under the sibling.")
    successes: int = Field(0, ge=0, description="Succeeded under the sibling.")
    steps: int = Field(0, ge=0, description="Decisions under the sibling (episodes with a record).")
    actions: int = Field(0, ge=0, description="Actions the env executed under the sibling.")
    invalid_actions: int = Field(0, ge=0)
    repeated_actions: int = Field(0, ge=0, description="Executed actions equal to the previous one.")
    observed: int = Field(
        0, ge=0, description="Episodes whose trajectory was seen (behaviour's denominator)."
    )
    effects: dict[str, int] = Field(default_factory=dict, description="Hook effects fired, per hook point.")

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        """Stored files carry the derived rates for readers; they are recomputed, not read back."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in _DERIVED}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rescue_rate(self) -> float:
        return self.rescues / self.h0_failures if self.h0_failures else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rescue_ci(self) -> tuple[float, float]:
        return wilson(self.rescues, self.h0_failures)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def break_rate(self) -> float:
        solved = self.attempts - self.h0_failures
        return self.breaks / solved if solved else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def invalid_rate(self) -> float:
        return self.invalid_actions / self.steps if self.steps else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def repeat_rate(self) -> float:
        return self.repeated_actions / self.actions if self.actions else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean_steps(self) -> float:
        return self.steps / self.observed if self.observed else 0.0

    def add(self, other: ProfileCell) -> ProfileCell:
        """The cell holding both cells' counts."""
        fields = ("attempts", "h0_failures", "rescues", "breaks", "successes", "steps", "actions")
        counts = {f: getattr(self, f) + getattr(other, f) for f in fields}
        counts["invalid_actions"] = self.invalid_actions + other.invalid_actions
        counts["repeated_actions"] = self.repeated_actions + other.repeated_actions
        counts["observed"] = self.observed + other.observed
        effects = dict(self.effects)
        for point, n in other.effects.items():
            effects[point] = effects.get(point, 0) + n
        return ProfileCell(**counts, effects=dict(sorted(effects.items())))

    def count(self, *, h0_failed: bool, success: bool, record: EpisodeRecord | None = None) -> None:
        """Count one paired outcome (and, given the sibling's episode, its behaviour)."""
        self.attempts += 1
        self.h0_failures += h0_failed
        self.rescues += h0_failed and success
        self.breaks += (not h0_failed) and not success
        self.successes += success
        if record is not None:
            self.observe(record)

    def observe(self, record: EpisodeRecord) -> None:
        """Add the behaviour seen in one episode (steps, invalid and repeated actions, hook effects)."""
        done = [s for s in record.steps if executed(s)]
        keys = [action_key(record.env, s.action or "") for s in done]
        self.observed += 1
        self.steps += len(record.steps)
        self.actions += len(done)
        self.invalid_actions += sum("invalid_action" in s.flags for s in record.steps)
        self.repeated_actions += sum(a == b for a, b in zip(keys, keys[1:], strict=False))
        for step in record.steps:
            for effect in step.effects:
                point = str(effect.get("point") or "?")
                self.effects[point] = self.effects.get(point, 0) + 1
        self.effects = dict(sorted(self.effects.items()))
