"""The rescuer's group logic with the scripted solver (fast, no model): under an H0 with a 3-step budget every
group fails; a sibling with a 30-step budget rescues. Group composition (replace / mixed), equal-compute
resampling, seeded random choice, the router's outcome feedback and the rescue audit."""

from __future__ import annotations

import asyncio

import pytest

from reharness.failures import failure_codes
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
from reharness.pool.profile import Profile, ProfileCell, pool_hash
from reharness.pool.router import Router
from reharness.runtime import Harness, SolverAgent, base_harness_config
from reharness.training.rescue import Rescuer
from reharness.training.rollouts import RolloutEngine, replay_in_h0

H0 = base_harness_config("household").model_copy(update={"step_limit": 3})


def pool() -> Pool:
    siblings = [
        Sibling(name="long", direction="loop_recovery", base=H0, delta={"step_limit": 30}, description="30"),
        Sibling(name="short", direction="state_memory", base=H0, delta={"step_limit": 2}, description="2"),
    ]
    return Pool("household", H0, siblings, PolicyRef(spec="solver"), builtin_directions())


def router(p: Pool) -> Router:
    ids = {s.name: s.id for s in p.siblings}
    cells = {
        ids["long"]: {"loop_recovery": ProfileCell(attempts=10, h0_failures=10, rescues=9)},
        ids["short"]: {"loop_recovery": ProfileCell(attempts=10, h0_failures=10, rescues=1)},
    }
    profile = Profile(
        pool_hash=pool_hash(p),
        policy=PolicyRef(spec="solver"),
        policy_hash="p",
        split="valid",
        tasks=[],
        cells=cells,
    )
    return Router(p, profile, top_k=1)


def rescuer(mode: str, group: str = "replace", **kw) -> Rescuer:  # type: ignore[no-untyped-def]
    p = pool()
    engine = RolloutEngine("household", "train", SolverAgent(), concurrency=8, annotate=failure_codes)
    return Rescuer(
        engine,
        Harness(H0),
        rescue=mode,
        k=2,
        seed=0,
        temperature=1.0,
        pool=p,
        router=router(p) if mode == "router" else None,
        rescue_group=group,
        **kw,
    )


TASKS = [0, 1, 2]


def test_router_rescue_replaces_all_failed_groups_and_feeds_the_profile() -> None:
    r = rescuer("router")
    report = asyncio.run(r.step(0, TASKS))
    assert all(g.all_failed_in_h0 for g in report.groups)  # nothing fits in 3 steps
    for g in report.groups:
        assert g.rescue is not None and g.rescue.name == "long" and g.rescue.successes == 2
        assert g.rollouts != g.base and all(x.harness == g.rescue.harness for x in g.rollouts)
        assert all(x.success and x.audited for x in g.rollouts)  # the actions replay to success in H0's env
    summary = report.summary()
    assert summary["rescues_tried"] == 3 and summary["rescues_succeeded"] == 3
    assert summary["per_sibling"] == {"long": {"tried": 3, "succeeded": 3, "audit_lost": 0}}
    assert r.engine.stats.episodes == {"h0": 6, "rescue": 6}
    assert r.router is not None
    learned = r.router.profile.learned[report.groups[0].rescue.harness]  # type: ignore[union-attr]
    assert sum(c.rescues for c in learned.values()) >= 6  # outcomes fed back to the profile


def test_mixed_groups_hold_the_sibling_successes_and_the_h0_failures() -> None:
    report = asyncio.run(rescuer("router", "mixed").step(0, TASKS))
    for g in report.groups:
        assert len(g.rollouts) == 4  # 2 rescued successes + 2 H0 failures, normalised together
        assert [x.success for x in g.rollouts] == [True, True, False, False]
        assert g.rollouts[2:] == g.base


def test_resample_is_fresh_h0_rollouts_and_random_is_seeded() -> None:
    report = asyncio.run(rescuer("resample").step(0, TASKS))
    for g in report.groups:
        assert g.rescue is not None and g.rescue.harness == "H0" and g.rescue.successes == 0
        assert {x.role for x in g.rollouts} == {"resample"}
        assert [x.record.seed for x in g.rollouts] != [x.record.seed for x in g.base]  # fresh seeds
    first = [g.rescue.name for g in asyncio.run(rescuer("random").step(0, TASKS)).groups]  # type: ignore[union-attr]
    again = [g.rescue.name for g in asyncio.run(rescuer("random").step(0, TASKS)).groups]  # type: ignore[union-attr]
    assert first == again and set(first) <= {"long", "short"}


def test_none_leaves_failed_groups_alone() -> None:
    r = rescuer("none")
    report = asyncio.run(r.step(0, TASKS))
    assert all(g.rescue is None and g.rollouts == g.base for g in report.groups)
    assert r.engine.stats.episodes == {"h0": 6}


def test_the_audit_rejects_a_success_the_actions_do_not_reproduce() -> None:
    report = asyncio.run(rescuer("router").step(0, [0]))
    rollout = report.groups[0].rollouts[0]
    assert rollout.record.success and replay_in_h0("household", "train", Harness(H0), rollout)
    executed = [s for s in rollout.record.steps if s.action]
    executed[-1].action = "look"  # the decisive action did not happen: the "success" cannot hold
    assert not replay_in_h0("household", "train", Harness(H0), rollout)


def test_router_mode_needs_a_router_and_a_pool() -> None:
    engine = RolloutEngine("household", "train", SolverAgent())
    with pytest.raises(ValueError, match="needs a router"):
        Rescuer(engine, Harness(H0), rescue="router", k=2, seed=0, temperature=1.0, pool=pool())
    with pytest.raises(ValueError, match="pool with at least one sibling"):
        Rescuer(engine, Harness(H0), rescue="random", k=2, seed=0, temperature=1.0)


class CoinSolver(SolverAgent):
    """The expert in episodes whose first request seed is even; ``look`` at every step in the others (a
    real small policy whose groups mix successes and failures, decided by the episode seed)."""

    policy_id = "coin-solver"

    def __init__(self, env: object = None, protocol: str = "text") -> None:
        super().__init__(env, protocol)
        self.good: bool | None = None

    def choose(self, request) -> str:  # type: ignore[no-untyped-def]
        if self.good is None:
            self.good = request.seed % 2 == 0
        return super().choose(request) if self.good else "look"


def test_only_the_group_without_a_success_is_rescued_in_the_same_step() -> None:
    # H0 allows 4 steps: train task 3 (4 expert steps) is solved by the coin's good episodes, task 0 (9
    # steps) by none; the sibling with 30 steps can rescue task 0. One step holds both groups.
    h0 = base_harness_config("household").model_copy(update={"step_limit": 4})
    sibling = Sibling(
        name="long", direction="loop_recovery", base=h0, delta={"step_limit": 30}, description="30"
    )
    p = Pool("household", h0, [sibling], PolicyRef(spec="coin"), builtin_directions())
    engine = RolloutEngine("household", "train", CoinSolver(), concurrency=8, annotate=failure_codes)
    r = Rescuer(engine, Harness(h0), rescue="random", k=4, seed=1, temperature=1.0, pool=p)
    report = asyncio.run(r.step(0, [3, 0]))
    mixed, failed = report.groups
    assert 0 < sum(x.success for x in mixed.base) < 4  # one success or more, not all: a GRPO signal
    assert not any(x.success for x in failed.base)
    assert mixed.rescue is None and mixed.rollouts == mixed.base  # never rescued
    assert failed.rescue is not None and failed.rescue.harness == sibling.id  # rescued
    assert all(x.harness == sibling.id and x.role == "rescue" for x in failed.rollouts)
    assert failed.rescue.successes == sum(x.success for x in failed.rollouts) > 0
    assert report.summary()["rescues_tried"] == 1 and engine.stats.episodes == {"h0": 8, "rescue": 4}


def test_a_profile_measured_at_another_temperature_is_named_with_its_fix() -> None:
    from reharness.training.reanchor import temperature_mismatch

    p = pool()
    profile = router(p).profile  # recorded without a temperature: the pool's H0 sampling (greedy)
    assert temperature_mismatch(profile, p, 0.0) is None
    warning = temperature_mismatch(profile, p, 1.0)
    assert warning is not None and "temperature 0" in warning and "--reanchor-at-start" in warning
    profile.temperature = 1.0
    assert temperature_mismatch(profile, p, 1.0) is None
