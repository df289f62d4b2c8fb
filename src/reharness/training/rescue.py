"""Complementary rescue (Harness-S): one training step's groups, with all-failed H0 groups re-sampled.

:meth:`Rescuer.step` runs K rollouts of the current policy under H0 for each task of the step. A group in
which *every* rollout fails gives GRPO no gradient; depending on ``rescue`` it then gets K fresh rollouts of
the same policy:

- ``router`` — under the sibling :class:`~reharness.pool.router.Router` chooses for that group (its failure
  codes, task type and features); the outcome is fed back to the router's profile and decision log;
- ``random`` — under a sibling drawn at random (seeded per step and task);
- ``placebo`` — the same, its pool being placebo siblings (:mod:`reharness.pool.placebo`);
- ``resample`` — under H0 again, with fresh seeds (the equal-compute baseline);
- ``none`` — nothing (policy-only GRPO).

``rescue_group``: ``replace`` trains on the fresh group as it is (each trajectory in the context that
generated it, successes and failures normalised together); ``mixed`` trains on the fresh group's successes
together with the K H0 failures. With ``audit`` every sibling success is replayed in H0's env (same task, same
seed, the executed actions): one that does not hold there gets reward 0 and is counted as lost to the audit.

All rescue rollouts of a step run concurrently in one batch, like the H0 rollouts, so rescue costs one
extra batched decode per step rather than one per group. Seeds are derived from (seed, step, task, rollout,
role): the same configuration reproduces the same stream of tasks, rollouts and decisions.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

from reharness.core.hashing import derive_seed
from reharness.core.types import SamplingParams
from reharness.pool.decision import RouteDecision
from reharness.pool.pool import Pool
from reharness.pool.router import Router
from reharness.runtime.harness import Harness
from reharness.training.rollouts import Job, Rollout, RolloutEngine, replay_in_h0


def with_sampling(
    harness: Harness, temperature: float, top_p: float = 1.0, max_tokens: int | None = None
) -> Harness:
    """``harness`` sampling at ``temperature`` (training rollouts) with at most ``max_tokens`` per reply
    (default: the harness's own budget), everything else unchanged."""
    sampling = SamplingParams(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens or harness.config.sampling.max_tokens
    )
    return Harness(harness.config.model_copy(update={"sampling": sampling}), harness.overlays)


@dataclass
class RescueAttempt:
    """One all-failed group's rescue: where it was re-sampled and what came of it."""

    task_index: int
    harness: str  # sibling id, or "H0" for resample
    name: str
    successes: int = 0
    attempts: int = 0
    audit_lost: int = 0
    decision_id: str | None = None
    reason: str = ""


@dataclass
class Group:
    """The rollouts GRPO trains on for one task, and the H0 group they replaced (if any)."""

    task_index: int
    rollouts: list[Rollout]
    base: list[Rollout]
    rescue: RescueAttempt | None = None

    @property
    def all_failed_in_h0(self) -> bool:
        return not any(r.success for r in self.base)


@dataclass
class StepReport:
    groups: list[Group] = field(default_factory=list)

    @property
    def attempts(self) -> list[RescueAttempt]:
        return [g.rescue for g in self.groups if g.rescue is not None]

    def rescued_turns(self) -> dict[str, int]:
        """Rescued successes of the step, and how many of them hold a rewritten or forced turn (a repair
        the harness made, not the policy: nothing to learn from under ``--rewritten-turns mask``)."""
        from reharness.training.episode_rows import REWRITE_FLAGS

        wins = [r for g in self.groups if g.rescue is not None for r in g.rollouts if r.success]
        rewritten = sum(any(f in REWRITE_FLAGS for t in r.turns for f in t.flags) for r in wins)
        return {"rescued_successes": len(wins), "rescued_with_rewrites": rewritten}

    def summary(self) -> dict[str, Any]:
        base = [r for g in self.groups for r in g.base]
        attempts = self.attempts
        per: dict[str, dict[str, int]] = {}
        for a in attempts:
            cell = per.setdefault(a.name, {"tried": 0, "succeeded": 0, "audit_lost": 0})
            cell["tried"] += 1
            cell["succeeded"] += int(a.successes > 0)
            cell["audit_lost"] += a.audit_lost
        return {
            "h0_success": sum(r.success for r in base) / len(base) if base else 0.0,
            "all_fail_groups": sum(g.all_failed_in_h0 for g in self.groups),
            "groups": len(self.groups),
            "rescues_tried": len(attempts),
            "rescues_succeeded": sum(a.successes > 0 for a in attempts),
            "rescue_rollout_successes": sum(a.successes for a in attempts),
            "audit_lost": sum(a.audit_lost for a in attempts),
            "per_sibling": per,
            "train_reward": (
                sum(r.success for g in self.groups for r in g.rollouts)
                / max(1, sum(len(g.rollouts) for g in self.groups))
            ),
        }


class Rescuer:
    """Runs a step's H0 groups and rescues the all-failed ones (see the module docstring)."""

    def __init__(
        self,
        engine: RolloutEngine,
        h0: Harness,
        *,
        rescue: str,
        k: int,
        seed: int,
        temperature: float,
        top_p: float = 1.0,
        pool: Pool | None = None,
        router: Router | None = None,
        rescue_group: str = "replace",
        audit: bool = True,
        sibling_workers: int = 8,
        max_tokens: int | None = None,
    ) -> None:
        if rescue == "router" and router is None:
            raise ValueError("rescue='router' needs a router")
        if rescue in ("router", "random", "placebo") and (pool is None or not pool.siblings):
            raise ValueError(f"rescue={rescue!r} needs a pool with at least one sibling")
        self.engine, self.rescue, self.k, self.seed = engine, rescue, k, seed
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.h0 = with_sampling(h0, temperature, top_p, max_tokens)
        self.pool, self.router = pool, router
        self.rescue_group, self.audit = rescue_group, audit
        self._siblings: dict[str, Harness] = {}
        self._names = {s.id: s.name for s in pool.siblings} if pool is not None else {}
        self._sibling_workers = sibling_workers

    def harnesses(self) -> list[Harness]:
        """Every harness this rescuer has run (their sandbox workers are closed at the end)."""
        return [self.h0, *self._siblings.values()]

    def _sibling(self, sibling_id: str) -> Harness:
        if sibling_id not in self._siblings:
            assert self.pool is not None
            sibling = self.pool.get(sibling_id)
            harness = sibling.harness(max_workers=self._sibling_workers)
            self._siblings[sibling_id] = with_sampling(harness, self.temperature, self.top_p, self.max_tokens)
        return self._siblings[sibling_id]

    def _jobs(self, step: int, task: int, harness: Harness, label: str, role: Any) -> list[Job]:
        return [
            Job(task, derive_seed(self.seed, role, label, step, task, j), harness, label, role)
            for j in range(self.k)
        ]

    async def _choose(self, step: int, group: list[Rollout]) -> tuple[str, RouteDecision | None, str]:
        """(sibling id, router decision, reason) for an all-failed group."""
        assert self.pool is not None
        if self.rescue in ("random", "placebo"):
            rng = random.Random(derive_seed(self.seed, "random-sibling", step, group[0].task_index))
            sibling = rng.choice(list(self.pool.siblings))
            return sibling.id, None, "random sibling"
        assert self.router is not None
        decision = await self.router.route([r.record for r in group])
        best = decision.choice[0]
        reason = next((c.reason for c in decision.candidates if c.sibling_id == best), "")
        return best, decision, reason

    async def step(self, step: int, tasks: list[int]) -> StepReport:
        """Run one training step's rollouts for ``tasks`` (their training-split indices)."""
        return await self.rescue_groups(step, await self.h0_groups(step, tasks))

    async def h0_groups(self, step: int, tasks: list[int]) -> list[Group]:
        """K rollouts of the policy under H0 for each of ``tasks``, one group per task."""
        jobs = [job for task in tasks for job in self._jobs(step, task, self.h0, "H0", "h0")]
        base = await self.engine.run(jobs, role="h0")
        return [
            Group(task, base[i * self.k : (i + 1) * self.k], base[i * self.k : (i + 1) * self.k])
            for i, task in enumerate(tasks)
        ]

    async def rescue_groups(self, step: int, groups: list[Group]) -> StepReport:
        """Rescue the all-failed ``groups`` (of :meth:`h0_groups`) by this rescuer's mode, in place."""
        failed = [g for g in groups if g.all_failed_in_h0]
        if self.rescue == "none" or not failed:
            return StepReport(groups)
        rescue_jobs: list[Job] = []
        decisions: dict[int, RouteDecision | None] = {}
        for group in failed:
            if self.rescue == "resample":
                sid, decision, reason, role = "H0", None, "fresh H0 rollouts", "resample"
                harness = self.h0
            else:
                sid, decision, reason = await self._choose(step, group.base)
                harness, role = self._sibling(sid), "rescue"
            decisions[group.task_index] = decision
            group.rescue = RescueAttempt(
                group.task_index,
                sid,
                self._names.get(sid, sid),
                attempts=self.k,
                decision_id=decision.decision_id if decision is not None else None,
                reason=reason,
            )
            rescue_jobs += self._jobs(step, group.task_index, harness, sid, role)
        role = "resample" if self.rescue == "resample" else "rescue"
        fresh = await self.engine.run(rescue_jobs, role=role)
        for i, group in enumerate(failed):
            rollouts = fresh[i * self.k : (i + 1) * self.k]
            attempt = group.rescue
            assert attempt is not None
            if self.audit and self.rescue != "resample":
                await self._audit(rollouts)
                attempt.audit_lost = sum(r.record.success and r.audited is False for r in rollouts)
            attempt.successes = sum(r.success for r in rollouts)
            decision = decisions.get(group.task_index)
            if decision is not None and self.router is not None:
                self.router.record_outcome(decision, attempt.harness, attempt.successes, attempt.attempts)
            if self.rescue_group == "mixed":
                group.rollouts = [r for r in rollouts if r.success] + group.base
            else:
                group.rollouts = rollouts
        return StepReport(groups)

    async def _audit(self, rollouts: list[Rollout]) -> None:
        loop = asyncio.get_running_loop()
        env, split = self.engine.env_name, self.engine.split
        for rollout in rollouts:
            if rollout.record.success:
                rollout.audited = await loop.run_in_executor(None, replay_in_h0, env, split, self.h0, rollout)
