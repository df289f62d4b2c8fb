"""``reharness pool eval``: a pool on held-out tasks — H0, every sibling, Rank-1 routing and the oracle.

H0 and each sibling run the same tasks and seeds (:func:`.measure.run_pool`). Because an episode is a
deterministic function of (harness, task, seed), the Rank-1 routed run — the router picks one harness per
task before acting, from the profile, and the task runs once — is the chosen harness's episode of each task;
``reharness run --pool POOL --route rank1`` runs exactly those episodes (and the tests check both agree).
The table reports:

- each harness's success rate, and its paired difference from H0 with a bootstrap 95 % interval;
- the best single sibling;
- Rank-1: success, Δ vs H0 with the paired interval, rescued/broken tasks, how often each harness was
  chosen, and rollouts spent (= n: one per task);
- the oracle (an upper bound for analysis, |pool| + 1 rollouts per task): the share of H0 failures that
  some sibling solves (coverage) and the success of "any harness solves it".
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from reharness.engineer.improve import Events
from reharness.measure.paired import compare
from reharness.pool.judges import rule_judges
from reharness.pool.measure import run_pool
from reharness.pool.pool import Pool
from reharness.pool.profile import Profile
from reharness.pool.router import RANK1_PRIOR, Router
from reharness.runtime.agents import Agent
from reharness.runtime.executor import RunSpec
from reharness.store.records import EpisodeRecord

H0 = "H0"


class HarnessRow(BaseModel):
    harness: str
    id: str
    direction: str = "-"
    success: float
    delta: float = 0.0
    ci_low: float = 0.0
    ci_high: float = 0.0
    rescued: int = 0
    broken: int = 0


class RoutedRow(HarnessRow):
    routing: dict[str, int] = Field(default_factory=dict, description="Harness id (or H0) → tasks.")
    rollouts: int = 0


class OracleRow(BaseModel):
    success: float
    coverage: float = Field(description="Share of H0 failures some sibling solves.")
    h0_failures: int
    covered: int
    rollouts: int


class ClusterRow(BaseModel):
    """One failure cluster of H0 on the evaluated tasks: its size and who rescues how much of it."""

    cluster: str
    h0_failures: int
    by_sibling: dict[str, int] = Field(default_factory=dict, description="Sibling name → tasks rescued.")
    oracle: int = Field(0, description="Tasks of the cluster some sibling solves.")
    rank1: int = Field(0, description="Tasks of the cluster the Rank-1 routed run solves.")


class PoolEvaluation(BaseModel):
    env: str
    policy: str
    split: str
    n: int
    seed: int
    route: str
    rows: list[HarnessRow]
    best_single: HarnessRow | None
    rank1: RoutedRow
    oracle: OracleRow
    clusters: list[ClusterRow] = Field(default_factory=list, description="Per failure cluster of H0.")


def _row(
    name: str, hid: str, direction: str, h0: list[EpisodeRecord], other: list[EpisodeRecord], seed: int
) -> HarnessRow:
    """``other`` against H0 on the same tasks and seeds: the paired comparison of :func:`compare`."""
    paired = compare(hid, h0, other, ci_seed=seed)
    return HarnessRow(
        harness=name,
        id=hid,
        direction=direction,
        success=paired.patched_success,
        delta=paired.success_delta,
        ci_low=paired.success_ci_low,
        ci_high=paired.success_ci_high,
        rescued=len(paired.rescued),
        broken=len(paired.broken),
    )


async def rank1_choices(router: Router, records: list[EpisodeRecord]) -> list[str | None]:
    """The sibling id (or ``None`` = H0) Rank-1 routing picks for each task, before any rollout."""
    out: list[str | None] = []
    for record in records:
        decision = await router.rank1(record, identity=record.task_identity)
        out.append(decision.choice[0] if decision.choice else None)
    return out


async def evaluate_pool(
    pool: Pool,
    profile: Profile | None,
    agent: Agent,
    spec: RunSpec,
    runs: str | Path,
    *,
    route: str = "validation",
    rank1_prior: float = RANK1_PRIOR,
    events: Events | None = None,
) -> PoolEvaluation:
    h0, siblings = await run_pool(pool, agent, spec, runs, events)
    rows = [_row(H0, pool.h0_identity, "-", h0, h0, spec.seed)]
    for s in pool.siblings:
        rows.append(_row(s.name, s.id, s.direction, h0, siblings[s.id], spec.seed))
    best = max(rows[1:], key=lambda r: r.success, default=None)
    choices: list[str | None] = [None] * len(h0)  # an empty pool routes every task to H0
    router = (
        Router(pool, profile, strategy=route, rank1_prior=rank1_prior, judges=rule_judges(route))
        if pool.siblings and profile is not None
        else None
    )
    if router is not None:
        choices = await rank1_choices(router, h0)
    routed = [siblings[c][i] if c is not None else h0[i] for i, c in enumerate(choices)]
    base = _row("rank1", "rank1", "-", h0, routed, spec.seed)
    routing: dict[str, int] = {}
    for c in choices:
        routing[c or H0] = routing.get(c or H0, 0) + 1
    rank1 = RoutedRow(**base.model_dump(), routing=routing, rollouts=len(h0))
    failed = [i for i, r in enumerate(h0) if not r.success]
    covered = [i for i in failed if any(siblings[s.id][i].success for s in pool.siblings)]
    any_success = [
        h0[i].success or any(siblings[s.id][i].success for s in pool.siblings) for i in range(len(h0))
    ]
    oracle = OracleRow(
        success=round(sum(any_success) / max(1, len(h0)), 6),
        coverage=round(len(covered) / max(1, len(failed)), 6),
        h0_failures=len(failed),
        covered=len(covered),
        rollouts=len(h0) * (len(pool.siblings) + 1),
    )
    if router is not None:
        await router.close()
    clusters = _clusters(pool, h0, siblings, routed)
    return PoolEvaluation(
        env=pool.env,
        policy=spec.agent,
        split=spec.split,
        n=len(h0),
        seed=spec.seed,
        route=route,
        rows=rows,
        best_single=best,
        rank1=rank1,
        oracle=oracle,
        clusters=clusters,
    )


def _clusters(
    pool: Pool,
    h0: list[EpisodeRecord],
    siblings: dict[str, list[EpisodeRecord]],
    routed: list[EpisodeRecord],
) -> list[ClusterRow]:
    """The coverage table on the evaluated tasks: one row per direction (the pool's, then the other built-in
    ones, so a held-out direction's cluster is reported too) and one for "any failure"."""
    from reharness.pool.directions import builtin_directions

    names = [d.name for d in pool.directions]
    directions = list(pool.directions) + [d for d in builtin_directions() if d.name not in names]
    rows = []
    for name, member in [(d.name, d.covers) for d in directions] + [("any failure", lambda codes: True)]:
        idx = [i for i, r in enumerate(h0) if not r.success and member(r.failure_codes)]
        rows.append(
            ClusterRow(
                cluster=name,
                h0_failures=len(idx),
                by_sibling={s.name: sum(siblings[s.id][i].success for i in idx) for s in pool.siblings},
                oracle=sum(any(siblings[s.id][i].success for s in pool.siblings) for i in idx),
                rank1=sum(routed[i].success for i in idx),
            )
        )
    return rows
