"""Routed runs at inference (``reharness run --pool POOL --route rank1|oracle``), Harness-S §4.

- ``rank1``: for each task, before any rollout, the router (:meth:`.router.Router.rank1`, from the profile by
  task type) picks exactly one harness — a sibling, or H0 — and the task runs once (rollouts = n).
- ``oracle`` (an upper bound, for analysis): H0 and every sibling run the task (|pool| + 1 rollouts; these
  runs are the ordinary content-addressed runs of :func:`.measure.run_pool`), and the episode kept is that of
  the first harness that solved it (H0 first, then pool order), else H0's.

Both are a :class:`~reharness.runtime.executor.HarnessRoute` for the ordinary batch executor, so routed
runs are stored, resumed and digested like any run, and every episode record names the harness it ran under.
"""

from __future__ import annotations

import time
from typing import Any

from reharness.core.hashing import stable_hash
from reharness.pool.judges import rule_judges
from reharness.pool.pool import Pool
from reharness.pool.profile import Profile, pool_hash
from reharness.pool.router import RANK1_PRIOR, Router
from reharness.runtime.harness import Harness

H0 = "H0"


class PoolRoute:
    """A per-task choice among H0 and the pool's siblings (``choice(task, index)`` → sibling id or None).

    ``rollouts_per_task``: the episodes the route spends per task (Rank-1: the task runs once)."""

    rollouts_per_task = 1

    def __init__(self, pool: Pool, identity: str, max_workers: int = 8) -> None:
        self.pool = pool
        self.identity = identity
        self.h0 = Harness(pool.h0)
        self.by_id = {s.id: s.harness(max_workers=max_workers) for s in pool.siblings}
        self.chosen: dict[int, str] = {}
        self.decide_s = 0.0  # seconds spent choosing (the router's cost, for benchmarks and reports)

    async def choice(self, task: Any, index: int) -> str | None:
        raise NotImplementedError

    async def harness_for(self, task: Any, index: int) -> Harness:
        start = time.perf_counter()
        sid = await self.choice(task, index)
        self.decide_s += time.perf_counter() - start
        self.chosen[index] = sid or H0
        return self.by_id[sid] if sid is not None else self.h0

    def harnesses(self) -> list[Harness]:
        return [self.h0, *self.by_id.values()]

    def routing(self, episodes: list[Any]) -> dict[str, int]:
        """Episodes per harness (sibling id, or ``H0``), from the harness each episode record names."""
        names = {self.h0.identity: H0} | {h.identity: sid for sid, h in self.by_id.items()}
        out: dict[str, int] = {}
        for record in episodes:
            key = names.get(record.harness_id, record.harness_id)
            out[key] = out.get(key, 0) + 1
        return out


class Rank1Route(PoolRoute):
    def __init__(
        self,
        pool: Pool,
        profile: Profile,
        strategy: str = "validation",
        rank1_prior: float = RANK1_PRIOR,
        **kw: Any,
    ) -> None:
        # the rule and its prior are part of the run's identity: a stored run routed otherwise is not reused
        identity = stable_hash(
            {
                "rank1": pool_hash(pool),
                "profile": profile.policy_hash,
                "strategy": strategy,
                "rule": "shrunk-type-gain",
                "prior": rank1_prior,
            }
        )
        super().__init__(pool, identity, **kw)
        self.router = Router(
            pool, profile, strategy=strategy, rank1_prior=rank1_prior, judges=rule_judges(strategy)
        )

    async def choice(self, task: Any, index: int) -> str | None:
        decision = await self.router.rank1(task)
        return decision.choice[0] if decision.choice else None


class OracleRoute(PoolRoute):
    """Keeps the first harness that solved each task in the measurement runs (``solved[index]``)."""

    def __init__(self, pool: Pool, solved: dict[int, str | None], **kw: Any) -> None:
        super().__init__(pool, stable_hash({"oracle": pool_hash(pool)}), **kw)
        self.solved = solved
        self.rollouts_per_task = len(pool.siblings) + 1  # H0 and every sibling ran each task

    async def choice(self, task: Any, index: int) -> str | None:
        return self.solved.get(index)


def oracle_choices(pool: Pool, h0: list[Any], siblings: dict[str, list[Any]]) -> dict[int, str | None]:
    """Per episode index: None when H0 solves it (or nobody does), else the first sibling that does."""
    out: dict[int, str | None] = {}
    for i, record in enumerate(h0):
        out[i] = (
            None if record.success else next((s.id for s in pool.siblings if siblings[s.id][i].success), None)
        )
    return out
