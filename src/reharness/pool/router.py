"""The router: which sibling(s) of a pool to try on a task that failed under H0 (Harness-S).

:meth:`Router.route` takes one failed group — the K episodes of one task under H0 — and returns a
:class:`~reharness.pool.decision.RouteDecision`: candidates with scores and reasons, the judges' votes, and
``choice``, the sibling ids to try, best first (``top_k`` of them; ``oracle``: every sibling). The
strategies (``validation``, ``profile``, ``vote``, ``random``, ``oracle``) are classes in :mod:`.strategies`.

Ties are broken by pool order throughout (Rank-1 first prefers the sibling with fewer breaks), so decisions
are deterministic for fixed seeds.
:meth:`Router.record_outcome` fills a decision's outcome, updates the profile's learned cells and appends
an outcome line to the log. :meth:`Router.rank1` picks exactly one harness (a sibling or H0) for a task
before acting, from the profile by task type (H0's own rate included). The router is free of CLI concerns
and async where it calls models, so a training loop can call it once per all-failed group.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from reharness.core.errors import ConfigError
from reharness.core.hashing import stable_hash
from reharness.pool.decision import (
    Candidate,
    DecisionLog,
    GroupFeatures,
    JudgeVote,
    Outcome,
    OutcomeLine,
    RouteContext,
    RouteDecision,
    group_context,
)
from reharness.pool.judges import CandidateView, Judge
from reharness.pool.pool import Pool
from reharness.pool.profile import Profile, ProfileCell, pool_directions, pool_hash
from reharness.pool.sibling import Sibling
from reharness.pool.strategies import make_strategy
from reharness.store.records import EpisodeRecord

#: Rank-1's prior strength, in tasks: a task type's own net gain is shrunk toward the sibling's pool-wide
#: net gain as if the pool-wide figure were this many extra tasks of the type (empirical Bayes). A type with
#: many validation tasks follows its own evidence; a thin one (a handful of tasks) mostly follows the
#: sibling's overall effect instead of its noise. Chosen a priori, not fitted to any split.
RANK1_PRIOR = 10.0


class TaskLike(Protocol):
    """What Rank-1 reads about a task before acting (an env ``Task`` or an ``EpisodeRecord``)."""

    @property
    def task_id(self) -> str: ...
    @property
    def task_type(self) -> str: ...
    @property
    def instruction(self) -> str: ...


class Router:
    """Route failed groups to siblings (see the module docstring)."""

    def __init__(
        self,
        pool: Pool,
        profile: Profile,
        strategy: str = "validation",
        top_k: int = 3,
        judges: Sequence[Judge] = (),
        seed: int = 0,
        log: str | Path | None = None,
        *,
        aggregation: Literal["majority", "borda"] = "majority",
        explore: float = 0.25,
        min_gain: float = 0.0,
        rank1_prior: float = RANK1_PRIOR,
    ) -> None:
        rule = make_strategy(strategy)
        if rank1_prior < 0:
            raise ConfigError(f"rank1_prior must be at least 0, got {rank1_prior}")
        if top_k < 1:
            raise ConfigError(f"top_k must be at least 1, got {top_k}")
        if aggregation not in ("majority", "borda"):
            raise ConfigError(f"unknown vote aggregation {aggregation!r}", hint="use majority or borda")
        if not pool.siblings:
            raise ConfigError("the pool has no siblings to route to", hint="evolve a pool first")
        if profile.pool_hash != pool_hash(pool):
            raise ConfigError("the profile was measured on another pool", hint="re-measure it for this pool")
        if rule.votes and not judges:
            raise ConfigError(
                "the vote strategy needs at least one judge", hint="e.g. judges=[DirectionJudge()]"
            )
        self.pool, self.profile, self.strategy, self.rule = pool, profile, strategy, rule
        self.top_k, self.judges, self.seed = top_k, list(judges), seed
        self.aggregation, self.explore, self.min_gain = aggregation, explore, min_gain
        self.rank1_prior = rank1_prior
        self.directions = pool_directions(pool)
        self._direction = {d.name: d for d in self.directions}
        self._members = [(s.id, s) for s in pool.siblings]  # ids are content hashes: compute them once
        self._by_id = dict(self._members)
        self._visits: dict[str, int] = {}
        self.log = DecisionLog(log) if log is not None else None

    # ------------------------------------------------------------------ scoring
    def _mix_rate(self, sid: str, mix: dict[str, float], *, learned: bool) -> tuple[float, float]:
        """(cluster-mix-weighted rescue rate, weighted evidence n) of a sibling: measured (+ learned)."""
        measured = self.profile.cells.get(sid, {})
        extra = self.profile.learned.get(sid, {}) if learned else {}
        rate = n = 0.0
        for key, weight in mix.items():
            fails = rescues = 0
            for source in (measured, extra):
                cell = source.get(key)
                if cell is not None:
                    fails += cell.h0_failures
                    rescues += cell.rescues
            rate += weight * (rescues / fails if fails else 0.0)
            n += weight * fails
        return rate, n

    def _score(self, sid: str, ctx: RouteContext) -> tuple[float, str]:
        if self.rule.validation_only:
            rate, n = self._mix_rate(sid, ctx.cluster_mix, learned=False)
            return rate, f"validation rescue rate {rate:.3f} for this cluster mix (n={n:.1f})"
        rate, n = self._mix_rate(sid, ctx.cluster_mix, learned=True)
        t = self.profile.type_cell(sid, ctx.task_type)
        evidence = n + t.h0_failures
        expected = (n * rate + t.h0_failures * t.rescue_rate) / evidence if evidence else 0.0
        bonus = self.explore / math.sqrt(1.0 + evidence)
        why = (
            f"expected rescue {expected:.3f} (cluster mix {rate:.3f}, n={n:.1f}; type {ctx.task_type} "
            f"{t.rescue_rate:.3f}, n={t.h0_failures}) + exploration {bonus:.3f}"
        )
        return expected + bonus, why

    def _candidates(self, ctx: RouteContext) -> list[Candidate]:
        scored = []
        for index, (sid, sibling) in enumerate(self._members):
            score, why = self._score(sid, ctx)
            share = ctx.cluster_mix.get(sibling.direction, 0.0)
            scored.append((-round(score, 12), -share, index, sid, sibling, score, why))
        scored.sort(key=lambda item: item[:3])
        return [
            Candidate(sibling_id=sid, name=s.name, direction=s.direction, score=round(score, 6), reason=why)
            for *_, sid, s, score, why in scored
        ]

    def _view(self, sibling_id: str, ctx: RouteContext) -> CandidateView:
        sibling = self._sibling(sibling_id)
        cell = ProfileCell()
        for key in ctx.cluster_mix:  # the evidence summed over the group's clusters
            cell = cell.add(self.profile.cell(sibling_id, key))
        return CandidateView(
            sibling_id=sibling_id,
            sibling=sibling,
            direction=self._direction.get(sibling.direction),
            cell=cell,
            type_cell=self.profile.type_cell(sibling_id, ctx.task_type),
        )

    def _sibling(self, key: str) -> Sibling:
        return self._by_id.get(key) or self.pool.get(key)

    def sibling_ids(self) -> list[str]:
        """Every sibling id, in pool order."""
        return [sid for sid, _ in self._members]

    async def votes_on(self, ctx: RouteContext, sibling_ids: list[str]) -> list[JudgeVote]:
        """Every judge's vote on ``sibling_ids``, asked concurrently (model judges overlap), in order."""
        views = [self._view(cid, ctx) for cid in sibling_ids]
        return list(await asyncio.gather(*(judge.vote(ctx, views) for judge in self.judges)))

    def aggregate(self, candidates: list[str], votes: list[JudgeVote]) -> list[str]:
        points = dict.fromkeys(candidates, 0.0)
        k = len(candidates)
        for vote in votes:
            ranking = [c for c in vote.ranking if c in points]
            if self.aggregation == "majority":
                ranking = ranking[:1]
            for i, cid in enumerate(ranking):
                points[cid] += 1.0 if self.aggregation == "majority" else float(k - 1 - i)
        order = {c: i for i, c in enumerate(candidates)}  # profile order breaks ties
        return sorted(candidates, key=lambda c: (-points[c], order[c]))

    # ------------------------------------------------------------------ routing
    def _decision_id(self, ctx: RouteContext, kind: str) -> str:
        visit = self._visits.get(ctx.task_identity + kind, 0)
        self._visits[ctx.task_identity + kind] = visit + 1
        return stable_hash(
            {
                "task": ctx.task_identity,
                "kind": kind,
                "seed": self.seed,
                "visit": visit,
                "strategy": self.strategy,
                "policy": self.profile.policy_hash,
            }
        )

    async def route(self, group: Sequence[EpisodeRecord]) -> RouteDecision:
        """Decide which siblings to try on one failed group (the K episodes of one task under H0)."""
        ctx = group_context(group, self.directions)
        return await self.decide(ctx)

    async def decide(self, ctx: RouteContext) -> RouteDecision:
        """:meth:`route` from an already-built context."""
        decision_id = self._decision_id(ctx, "group")
        candidates = self._candidates(ctx)
        k = min(self.top_k, len(candidates))
        choice, votes = await self.rule.choose(self, ctx, candidates, k, decision_id)
        decision = RouteDecision(
            decision_id=decision_id,
            env=ctx.env,
            task_id=ctx.task_id,
            task_identity=ctx.task_identity,
            task_type=ctx.task_type,
            group_size=ctx.group_size,
            failure_codes=ctx.failure_codes,
            cluster_mix=ctx.cluster_mix,
            features=ctx.features,
            strategy=self.strategy,
            aggregation=self.aggregation if self.rule.votes else None,
            candidates=candidates,
            votes=votes,
            choice=choice,
            model_calls=sum(v.calls for v in votes),
            tokens=sum(v.tokens for v in votes),
        )
        if self.log is not None:
            self.log.write(decision)
        return decision

    def record_outcome(
        self, decision: RouteDecision, sibling_id: str, successes: int, attempts: int
    ) -> Outcome:
        """Record that ``sibling_id`` solved ``successes`` of ``attempts`` rollouts of the decision's task:
        fill the decision's outcome, count the rescues in the profile's learned cells, append an outcome
        line to the log. (Rank-1 decisions are recorded but teach the profile nothing: H0 did not run.)"""
        if not 0 <= successes <= attempts:
            raise ConfigError(f"successes ({successes}) must lie in 0..attempts ({attempts})")
        sid = sibling_id if sibling_id in self._by_id else self.pool.get(sibling_id).id
        outcome = Outcome(sibling_id=sid, successes=successes, attempts=attempts)
        keys = [k for k, v in decision.cluster_mix.items() if v > 0]
        if decision.kind == "group":
            for i in range(attempts):
                self.profile.update(sid, keys, decision.task_type, rescued=i < successes, broke=False)
        decision.outcome.append(outcome)
        if self.log is not None:
            self.log.write(OutcomeLine(decision_id=decision.decision_id, outcome=outcome))
        return outcome

    # ------------------------------------------------------------------ Rank-1
    def _shrunk_gain(self, sid: str, cell: ProfileCell) -> float:
        """A sibling's net gain over H0 on one task type, (rescues - breaks) / attempts, shrunk toward its
        net gain over every measured type with ``rank1_prior`` pseudo-tasks (see :data:`RANK1_PRIOR`)."""
        cells = self.profile.by_task_type.get(sid, {}).values()
        attempts = sum(c.attempts for c in cells)
        overall = sum(c.rescues - c.breaks for c in cells) / attempts if attempts else 0.0
        weight = cell.attempts + self.rank1_prior
        if weight == 0:
            return 0.0
        return ((cell.rescues - cell.breaks) + self.rank1_prior * overall) / weight

    def _pool_breaks(self, sid: str) -> int:
        """H0 successes a sibling broke over every measured task type."""
        return sum(c.breaks for c in self.profile.by_task_type.get(sid, {}).values())

    async def rank1(self, task: TaskLike, identity: str | None = None) -> RouteDecision:
        """One harness for ``task`` before acting: the sibling whose paired evidence on this task type,
        shrunk toward its pool-wide evidence (:meth:`_shrunk_gain`), beats H0 most (net gain >
        ``min_gain``), or none (``choice == []``: H0); equal gains go to the sibling that breaks fewer H0
        successes. With judges (strategy ``vote``) they vote among the siblings with a positive gain."""
        ctx = RouteContext(
            env=self.pool.env,
            task_id=task.task_id,
            task_identity=identity or task.task_id,
            task_type=task.task_type,
            instruction=task.instruction,
            cluster_mix={},
            features=GroupFeatures(instruction_chars=len(task.instruction)),
        )
        decision_id = self._decision_id(ctx, "rank1")
        h0 = self.profile.h0.get(task.task_type, ProfileCell())
        scored = []
        for index, (sid, sibling) in enumerate(self._members):
            # measured cells only: learned outcomes come from groups H0 failed, so they would bias the
            # comparison with H0's success rate upwards
            t = self.profile.type_cell(sid, task.task_type, learned=False)
            gain = self._shrunk_gain(sid, t)
            why = (
                f"type {task.task_type}: success {t.success_rate:.3f} vs H0 {h0.success_rate:.3f} "
                f"(+{t.rescues} rescued, -{t.breaks} broken of {t.attempts}; net gain {gain:+.3f} "
                f"shrunk toward the sibling's pool-wide gain)"
            )
            # equal gains: the sibling that breaks fewer of H0's successes (on the type, then pool-wide)
            # is the more conservative change; pool order decides only what is still tied
            breaks = (t.breaks, self._pool_breaks(sid))
            scored.append((-round(gain, 12), breaks, index, sid, sibling, gain, why))
        scored.sort(key=lambda item: item[:3])
        candidates = [
            Candidate(sibling_id=sid, name=s.name, direction=s.direction, score=round(g, 6), reason=why)
            for *_, sid, s, g, why in scored
        ]
        better = [c.sibling_id for c in candidates if c.score > self.min_gain]
        votes: list[JudgeVote] = []
        if better and self.rule.votes and self.judges:
            top = better[: self.top_k]
            votes = await self.votes_on(ctx, top)
            better = self.aggregate(top, votes)
        decision = RouteDecision(
            decision_id=decision_id,
            kind="rank1",
            env=ctx.env,
            task_id=ctx.task_id,
            task_identity=ctx.task_identity,
            task_type=ctx.task_type,
            group_size=0,
            failure_codes={},
            cluster_mix={},
            features=ctx.features,
            strategy="rank1+vote" if self.rule.votes else "rank1",
            aggregation=self.aggregation if votes else None,
            candidates=candidates,
            votes=votes,
            choice=better[:1],
            model_calls=sum(v.calls for v in votes),
            tokens=sum(v.tokens for v in votes),
        )
        if self.log is not None:
            self.log.write(decision)
        return decision

    async def close(self) -> None:
        """Close the log and the judges' model connections."""
        if self.log is not None:
            self.log.close()
        for judge in self.judges:
            closer = getattr(judge, "close", None)
            if closer is not None:
                await closer()
