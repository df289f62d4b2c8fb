"""The records of directional evolution: a candidate's lineage, its measure on ``valid``, the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reharness.measure.baseline import Baseline
from reharness.patches.model import Patch
from reharness.pool.pool import Pool
from reharness.pool.sibling import apply_delta
from reharness.runtime.harness import HarnessConfig
from reharness.store.records import EpisodeRecord


@dataclass
class Lineage:
    """A candidate sibling during evolution: its content, origin and measured fitness."""

    direction: str
    generation: int
    delta: dict[str, Any] = field(default_factory=dict)
    patches: tuple[Patch, ...] = ()
    origin: str = "H0"
    cid: str = "H0"
    parent: str | None = None
    fitness: float = 0.0
    rescued: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    effect_steps: int = 0

    def config(self, h0: HarnessConfig) -> HarnessConfig:
        return apply_delta(h0, self.delta, self.direction)


@dataclass
class ValidMeasure:
    lineage: Lineage
    rescued: list[str]
    broken: list[str]
    success: float
    records: list[EpisodeRecord]


@dataclass
class EvolveResult:
    pool: Pool
    admitted: list[ValidMeasure]
    finalists: list[ValidMeasure]
    h0_train: Baseline
    h0_valid: Baseline
    clusters: dict[str, list[str]]
    candidates: list[dict[str, Any]]
    out: Path
