"""Paired evaluation: rerun the frozen target with a patch on exactly the baseline's tasks and seeds.

:func:`evaluate_patch` installs the patch (after the target's already accepted patches) and reruns the
baseline's batch — same spec, hence the same task identities and episode seeds; the pairing is checked before
and after the run and a mismatch raises :class:`PairingError` instead of comparing different tasks. It
returns a :class:`PairedResult`:

- **Δ_B** (``delta``) = mean over the *whole* batch of (patched score − baseline score), already-solved tasks
  included (REFERENCE.md §1). ``score`` is the environment's final score: WebShop's shaped reward on the
  WebShop-like kit, 0/1 elsewhere. ``success_delta`` is the change of the success rate.
- **flips**: ``rescued`` (failed → succeeded) and ``broken`` (succeeded → failed) task ids.
- **confidence intervals** of Δ_B and of the success change: percentile bootstrap over tasks with paired
  resampling (a task's baseline and patched scores stay together), :data:`BOOTSTRAP_RESAMPLES` resamples,
  95 %, a fixed seed, so the interval is deterministic.
- **cost**: episodes, model calls made and saved (prefix reuse, :mod:`.prefix`), tokens, seconds.
- **infrastructure errors**: patched episodes that ended in a policy error / env error (the model server or
  the environment failed, not the patch), counted apart so a report can say how much of Δ_B they touch.

Scoring rules: a patch that is missing (the engineer's reply did not parse), statically invalid, for another
environment, or *degenerate* (no effect of its own hooks on any step of the whole batch; effects of patches
already in the target do not count) scores 0 (``delta == 0``, no flips) with its ``status`` and ``reason``.
:func:`evaluate_candidates` runs candidates concurrently, each in its own ``try`` with a timeout: a candidate
that crashes or hangs is recorded as ``error``/``timeout`` with Δ 0 and costs only itself. (Hook code runs in
sandbox processes, so it cannot block the event loop; a hanging policy call is cancelled by the timeout.)
``valid`` is true only for ``status == "ok"`` — Harness-R1's "executable and non-degenerate".
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from reharness.core.errors import ReharnessError
from reharness.measure.baseline import Baseline, RunCost, run_measured
from reharness.patches.leakage import LeakageEvidence
from reharness.patches.model import Patch
from reharness.patches.validate import validate_patch
from reharness.runtime.agents import Agent
from reharness.store.records import EpisodeRecord, infrastructure_error


class ProposalLike(Protocol):
    """What a candidate needs of an engineer's proposal (:class:`reharness.engineer.base.Proposal`; the
    engineers sit above this layer, so it is typed by shape)."""

    @property
    def patch(self) -> Patch | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_code(self) -> str | None: ...


#: Bootstrap resamples of the confidence interval (percentile method, 95 %).
BOOTSTRAP_RESAMPLES = 2000
CI_LEVEL = 0.95
Status = Literal["ok", "invalid", "degenerate", "error", "timeout"]


class PairingError(ReharnessError):
    """Two batches cannot be compared: their task identities or seeds differ."""

    code = "pairing_error"


class PairedResult(BaseModel):
    """One candidate measured against its baseline on the same tasks and seeds."""

    candidate_id: str
    patch_ids: list[str] = Field(default_factory=list)
    status: Status
    reason: str | None = None
    n: int
    baseline_score: float
    patched_score: float
    delta: float
    baseline_success: float
    patched_success: float
    success_delta: float
    rescued: list[str] = Field(default_factory=list)
    broken: list[str] = Field(default_factory=list)
    ci_low: float = 0.0
    ci_high: float = 0.0
    success_ci_low: float = 0.0
    success_ci_high: float = 0.0
    ci_resamples: int = BOOTSTRAP_RESAMPLES
    effect_steps: int = 0
    hook_errors: int = 0
    policy_errors: int = 0
    env_errors: int = 0
    cost: RunCost = Field(default_factory=RunCost)
    run_dir: str | None = None

    @property
    def valid(self) -> bool:
        return self.status == "ok"


def bootstrap_ci(
    diffs: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, level: float = CI_LEVEL, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (deterministic for a seed)."""
    n = len(diffs)
    if n == 0:
        return 0.0, 0.0
    rng = random.Random(seed)
    return _percentile_interval(
        [sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples)], level
    )


def bootstrap_difference_ci(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = CI_LEVEL,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(a) - mean(b)`` for two independent samples, each resampled on
    its own (deterministic for a seed): for rates measured on different units, such as the all-failed groups
    that two training arms met, where no pairing exists."""
    if not a or not b:
        return 0.0, 0.0
    rng = random.Random(seed)

    def mean_of_resample(xs: Sequence[float]) -> float:
        return sum(xs[rng.randrange(len(xs))] for _ in range(len(xs))) / len(xs)

    return _percentile_interval([mean_of_resample(a) - mean_of_resample(b) for _ in range(resamples)], level)


def _percentile_interval(estimates: list[float], level: float) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap estimates, rounded as every table prints it."""
    ordered, tail = sorted(estimates), (1.0 - level) / 2.0
    low = ordered[max(0, int(tail * len(ordered)))]
    high = ordered[min(len(ordered) - 1, int((1.0 - tail) * len(ordered)) - 1)]
    return round(low, 6), round(high, 6)


def check_pairing(
    baseline: Sequence[tuple[str, int]], other: Sequence[tuple[str, int]], what: str = "patched run"
) -> None:
    """Raise :class:`PairingError` unless both lists of (task identity, seed) are identical."""
    if list(baseline) == list(other):
        return
    if len(baseline) != len(other):
        detail = f"{len(other)} episodes vs the baseline's {len(baseline)}"
    else:
        i = next(i for i, (a, b) in enumerate(zip(baseline, other, strict=True)) if a != b)
        detail = f"episode {i} is task {other[i][0]} seed {other[i][1]}, baseline has {baseline[i]}"
    raise PairingError(
        f"cannot pair the {what} with its baseline: {detail}",
        hint="rerun with the baseline's spec (same env, split, n, seed, data) and harness config",
    )


def compare(
    candidate_id: str,
    baseline: Sequence[EpisodeRecord],
    patched: Sequence[EpisodeRecord],
    *,
    patch_ids: Sequence[str] = (),
    cost: RunCost | None = None,
    run_dir: str | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    ci_seed: int = 0,
    overlays: Collection[str] | None = None,
) -> PairedResult:
    """Paired comparison of two batches of the same tasks and seeds (checked).

    ``effect_steps`` and ``hook_errors`` count only the effects and errors of the named ``overlays`` (the
    candidate's, not those of patches already in the target); ``None`` counts every overlay's.
    """
    check_pairing([(e.task_identity, e.seed) for e in baseline], [(e.task_identity, e.seed) for e in patched])
    n = max(1, len(baseline))
    diffs = [p.score - b.score for b, p in zip(baseline, patched, strict=True)]

    def ours(name: str) -> bool:
        return overlays is None or name in overlays

    effect_steps = sum(
        1 for e in patched for s in e.steps if any(ours(x.get("overlay", "")) for x in s.effects)
    )
    ci_low, ci_high = bootstrap_ci(diffs, resamples, seed=ci_seed)
    wins = [float(p.success) - float(b.success) for b, p in zip(baseline, patched, strict=True)]
    success_low, success_high = bootstrap_ci(wins, resamples, seed=ci_seed)
    base_success = sum(e.success for e in baseline) / n
    infra = [infrastructure_error(e) for e in patched]
    patched_success = sum(e.success for e in patched) / n
    return PairedResult(
        candidate_id=candidate_id,
        patch_ids=list(patch_ids),
        status="ok",
        n=len(baseline),
        baseline_score=round(sum(e.score for e in baseline) / n, 6),
        patched_score=round(sum(e.score for e in patched) / n, 6),
        delta=round(sum(diffs) / n, 6),
        baseline_success=round(base_success, 6),
        patched_success=round(patched_success, 6),
        success_delta=round(patched_success - base_success, 6),
        rescued=[p.task_id for b, p in zip(baseline, patched, strict=True) if p.success and not b.success],
        broken=[p.task_id for b, p in zip(baseline, patched, strict=True) if b.success and not p.success],
        ci_low=ci_low,
        ci_high=ci_high,
        success_ci_low=success_low,
        success_ci_high=success_high,
        ci_resamples=resamples,
        effect_steps=effect_steps,
        hook_errors=sum(1 for e in patched for s in e.steps for err in s.hook_errors if ours(err.overlay)),
        policy_errors=infra.count("policy"),
        env_errors=infra.count("env"),
        cost=cost or RunCost(),
        run_dir=run_dir,
    )


def scored_zero(
    candidate_id: str,
    baseline: Baseline,
    status: Status,
    reason: str,
    *,
    patch_ids: Sequence[str] = (),
    measured: PairedResult | None = None,
) -> PairedResult:
    """A candidate that scores as no patch: Δ 0, no flips, the baseline's numbers, with why."""
    episodes = baseline.episodes
    n = max(1, len(episodes))
    score = round(sum(e.score for e in episodes) / n, 6)
    success = round(sum(e.success for e in episodes) / n, 6)
    return PairedResult(
        candidate_id=candidate_id,
        patch_ids=list(patch_ids),
        status=status,
        reason=reason,
        n=len(episodes),
        baseline_score=score,
        patched_score=score,
        delta=0.0,
        baseline_success=success,
        patched_success=success,
        success_delta=0.0,
        hook_errors=measured.hook_errors if measured else 0,
        policy_errors=measured.policy_errors if measured else 0,
        env_errors=measured.env_errors if measured else 0,
        cost=measured.cost if measured else RunCost(),
        run_dir=measured.run_dir if measured else None,
    )


def static_problem(patch: Patch, env: str, evidence: LeakageEvidence | None = None) -> str | None:
    """Why ``patch`` cannot run on ``env`` (first validation errors), or ``None`` when it can."""
    if patch.env is not None and patch.env != env:
        return f"the patch is for env {patch.env!r}, the batch is {env!r}"
    errors = validate_patch(patch, evidence=evidence)
    if not errors:
        return None
    return "; ".join(f"{e.hook or 'patch'}:{e.line}:{e.col} [{e.rule}] {e.message}" for e in errors[:3])


def check_baseline_plan(baseline: Baseline) -> None:
    """Refuse a baseline whose recorded (task identity, seed) pairs are not what its spec plans."""
    check_pairing(baseline.planned, list(baseline.run.plan), "baseline")


async def evaluate_patch(
    patch: Patch | Sequence[Patch] | None,
    baseline: Baseline,
    agent: Agent,
    out_dir: str | Path,
    *,
    candidate_id: str = "p0",
    invalid_reason: str | None = None,
    evidence: LeakageEvidence | None = None,
    prefix_reuse: bool = True,
    resamples: int = BOOTSTRAP_RESAMPLES,
    ci_seed: int = 0,
    max_workers: int = 4,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    check: bool = True,
    retry_errors: bool = False,
    score_degenerate: bool = False,
) -> PairedResult:
    """Rerun ``baseline``'s batch with ``patch`` (one patch, or several stacked in order) and compare.

    ``patch=None`` is a proposal that did not parse: it scores 0 with ``invalid_reason``. ``score_degenerate``
    keeps the rerun's own outcome for a patch without effects (a placebo control) instead of scoring it as no
    patch; its ``reason`` says so. Patched runs are
    stored under ``OUT/paired/`` (the run id hashes the harness, so rerunning a patch loads its run).
    """
    patches = [] if patch is None else [patch] if isinstance(patch, Patch) else list(patch)
    ids = [p.identity for p in patches]
    if not patches:
        return scored_zero(candidate_id, baseline, "invalid", invalid_reason or "no patch", patch_ids=ids)
    env = baseline.episodes[0].env if baseline.episodes else baseline.spec.env
    for p in patches:
        problem = static_problem(p, env, evidence)
        if problem:
            return scored_zero(candidate_id, baseline, "invalid", problem, patch_ids=ids)
    if check:
        check_baseline_plan(baseline)
    harness = baseline.target.harness(patches, max_workers=max_workers)
    result, cost, _ = await run_measured(
        baseline.run.with_harness(harness),
        agent,
        Path(out_dir) / "paired",
        replay=baseline.episodes if prefix_reuse else None,
        on_episode=on_episode,
        retry_errors=retry_errors,
    )
    measured = compare(
        candidate_id,
        baseline.episodes,
        result.episodes,
        patch_ids=ids,
        cost=cost,
        run_dir=result.out,
        resamples=resamples,
        ci_seed=ci_seed,
        overlays={o.name for o in harness.overlays[len(baseline.target.patches) :]},
    )
    if measured.effect_steps == 0:
        reason = "no hook effect on any step of the batch" + (
            f" ({measured.hook_errors} hook errors)" if measured.hook_errors else ""
        )
        if score_degenerate:
            return measured.model_copy(update={"reason": reason + "; scored by its rerun"})
        return scored_zero(candidate_id, baseline, "degenerate", reason, patch_ids=ids, measured=measured)
    return measured


@dataclass(frozen=True)
class Candidate:
    """One proposal to evaluate: a patch, or ``None`` with the reason it is missing."""

    id: str
    patch: Patch | None = None
    invalid_reason: str | None = None

    @classmethod
    def of(cls, id: str, proposal: ProposalLike) -> Candidate:
        """The candidate of an engineer's proposal: its patch, or why it has none."""
        reason = None if proposal.patch else f"[{proposal.error_code}] {proposal.error}"
        return cls(id, proposal.patch, reason)


async def evaluate_candidates(
    candidates: Sequence[Candidate],
    baseline: Baseline,
    agent: Agent,
    out_dir: str | Path,
    *,
    timeout_s: float | None = None,
    evidence: LeakageEvidence | None = None,
    prefix_reuse: bool = True,
    max_workers: int = 4,
    on_episode: Callable[[str, EpisodeRecord], None] | None = None,
    retry_errors: bool = False,
) -> list[PairedResult]:
    """Evaluate candidates concurrently; a crash or timeout of one is recorded and costs only itself.

    Candidates with identical patches are evaluated once and share the result (under their own ids).
    """
    check_baseline_plan(baseline)

    async def one(candidate: Candidate) -> PairedResult:
        ids = [candidate.patch.identity] if candidate.patch is not None else []
        callback = None if on_episode is None else (lambda r: on_episode(candidate.id, r))
        try:
            return await asyncio.wait_for(
                evaluate_patch(
                    candidate.patch,
                    baseline,
                    agent,
                    out_dir,
                    candidate_id=candidate.id,
                    invalid_reason=candidate.invalid_reason,
                    evidence=evidence,
                    prefix_reuse=prefix_reuse,
                    max_workers=max_workers,
                    on_episode=callback,
                    check=False,
                    retry_errors=retry_errors,
                ),
                timeout_s,
            )
        except TimeoutError:
            return scored_zero(
                candidate.id, baseline, "timeout", f"timed out after {timeout_s} s", patch_ids=ids
            )
        except Exception as exc:  # a crashing candidate is data, not a crash of the round
            reason = f"{type(exc).__name__}: {exc}"[:500]
            return scored_zero(candidate.id, baseline, "error", reason, patch_ids=ids)

    # identical patches (same identity) would write the same run directory: evaluate each once
    first: dict[str, Candidate] = {}
    for c in candidates:
        if c.patch is not None:
            first.setdefault(c.patch.identity, c)
    unique = [c for c in candidates if c.patch is None or first[c.patch.identity] is c]
    done = dict(zip((c.id for c in unique), await asyncio.gather(*(one(c) for c in unique)), strict=True))
    results = []
    for c in candidates:
        if c.id in done:
            results.append(done[c.id])
        else:
            assert c.patch is not None
            twin = done[first[c.patch.identity].id]
            results.append(twin.model_copy(update={"candidate_id": c.id}))
    return results
