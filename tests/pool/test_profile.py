"""Behaviour profiles measured on real paired household episodes; Wilson intervals; save/load errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pool_fixtures import h0_config, run_episodes, small_pool

from reharness.core.errors import ConfigError, DataError
from reharness.envs.registry import make_env
from reharness.patches.model import load_patch
from reharness.pool import PolicyRef, Sibling
from reharness.pool.profile import (
    OTHER,
    SOLVED,
    Profile,
    ProfileCell,
    load_profile,
    measure_profile,
    pool_hash,
    reanchor,
    wilson,
)
from reharness.runtime import EpisodeRunner, FunctionAgent, RandomAgent, SolverAgent

SNAP = Path(__file__).resolve().parents[2] / "examples" / "patches" / "household_snap_to_admissible.yaml"


@pytest.fixture(scope="module")
def measured():  # type: ignore[no-untyped-def]
    pool = small_pool()
    h0 = run_episodes(h0_config(), SolverAgent())
    sib = {s.id: run_episodes(s.config, SolverAgent()) for s in pool.siblings}
    return pool, h0, sib


def test_wilson_interval_values() -> None:
    # reference values (Wilson 1927; e.g. statsmodels proportion_confint(method="wilson"))
    assert wilson(3, 10) == pytest.approx((0.10779, 0.60322), abs=1e-5)
    assert wilson(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson(10, 10) == pytest.approx((0.72247, 1.0), abs=1e-5)
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(50, 100)
    assert low == pytest.approx(1 - high) and high - low < 0.2


def test_profile_counts_match_the_paired_episodes(measured) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    profile = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    failed = [r for r in h0 if not r.success]
    assert failed and any(r.success for r in h0)  # the 6-step budget splits the tasks
    assert all("step_limit" in r.failure_codes for r in failed)
    long_id, short_id = pool.get("long-budget").id, pool.get("short-budget").id
    by_key = {(r.task_identity, r.seed): r for r in sib[long_id]}
    expected_rescues = sum(by_key[(r.task_identity, r.seed)].success for r in failed)
    # step_limit lies in loop_recovery's and state_memory's clusters: the failure counts in each
    for cluster in ("loop_recovery", "state_memory"):
        cell = profile.cells[long_id][cluster]
        assert (cell.attempts, cell.h0_failures, cell.rescues) == (len(failed), len(failed), expected_rescues)
    assert expected_rescues == len(failed)  # 30 steps are enough for the solver
    solved = profile.cells[short_id][SOLVED]
    short = {(r.task_identity, r.seed): r for r in sib[short_id]}
    breaks = sum(not short[(r.task_identity, r.seed)].success for r in h0 if r.success)
    assert solved.attempts == len(h0) - len(failed) and solved.breaks == breaks > 0
    assert solved.break_rate == pytest.approx(breaks / solved.attempts)
    # behaviour under the sibling: a 4-step budget means at most 4 steps per episode
    assert 0 < solved.mean_steps <= 4 and profile.cells[long_id]["loop_recovery"].mean_steps > 6
    # task-type view: every pair counted once under its type; H0's own rows by type
    for sid in (long_id, short_id):
        assert sum(c.attempts for c in profile.by_task_type[sid].values()) == len(h0)
    assert sum(c.attempts for c in profile.h0.values()) == len(h0)
    assert sum(c.successes for c in profile.h0.values()) == len(h0) - len(failed)
    assert profile.tasks == sorted({r.task_identity for r in h0})
    assert profile.pool_hash == pool_hash(pool) and profile.split == "valid"
    lo, hi = profile.cells[long_id]["loop_recovery"].rescue_ci
    assert (lo, hi) == wilson(expected_rescues, len(failed))


def test_failures_in_no_cluster_count_under_other(measured) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    relabelled = [
        r.model_copy(update={"failure_codes": ["policy_error"]}) if not r.success else r for r in h0
    ]
    profile = measure_profile(pool, relabelled, sib, policy=PolicyRef(spec="solver"), split="valid")
    sid = pool.siblings[0].id
    assert set(profile.cells[sid]) == {OTHER, SOLVED}
    assert profile.cells[sid][OTHER].h0_failures == sum(not r.success for r in h0)


def test_mismatched_pairs_are_refused(measured) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    sid = pool.siblings[0].id
    with pytest.raises(DataError, match="not paired.*1 H0 task"):
        measure_profile(pool, h0, {sid: sib[sid][:-1]}, policy=PolicyRef(spec="solver"), split="valid")
    reseeded = [r.model_copy(update={"seed": 7}) for r in sib[sid]]
    with pytest.raises(DataError, match="not paired"):
        measure_profile(pool, h0, {sid: reseeded}, policy=PolicyRef(spec="solver"), split="valid")
    with pytest.raises(DataError, match="twice"):
        measure_profile(pool, h0 + h0[:1], sib, policy=PolicyRef(spec="solver"), split="valid")
    with pytest.raises(DataError, match="not in the pool"):
        measure_profile(pool, h0, {"nope": sib[sid]}, policy=PolicyRef(spec="solver"), split="valid")
    other_policy = [r.model_copy(update={"policy_id": "random"}) for r in sib[sid]]
    with pytest.raises(DataError, match="different policies"):
        measure_profile(pool, h0, {sid: other_policy}, policy=PolicyRef(spec="solver"), split="valid")


def test_reanchoring_changes_the_policy_hash(measured) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    first = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    first.update(pool.siblings[0].id, ["loop_recovery"], "pick_and_place_simple", rescued=True, broke=False)
    rand_h0 = run_episodes(h0_config(), RandomAgent(), n=6)
    rand_sib = {s.id: run_episodes(s.config, RandomAgent(), n=6) for s in pool.siblings[:2]}
    again = reanchor(pool, rand_h0, rand_sib, policy=PolicyRef(spec="random"))
    assert again.policy.spec == "random" and again.policy_hash != first.policy_hash
    assert again.learned == {} and again.updates == 0 and again.tasks != first.tasks
    weights = reanchor(pool, h0, sib, policy=PolicyRef(spec="tiny:household-S", hash="abc123"))
    assert weights.policy_hash == "abc123"
    assert reanchor(pool, h0, sib, policy=PolicyRef(spec="tiny:household-S", hash="def456")).policy_hash != (
        weights.policy_hash
    )


def test_update_counts_learned_outcomes_apart(measured) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    profile = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    sid = pool.get("no-listing").id
    before = profile.cell(sid, "loop_recovery")
    profile.update(sid, ["loop_recovery"], "pick_two_obj_and_place", rescued=True, broke=False)
    profile.update(sid, ["loop_recovery"], "pick_two_obj_and_place", rescued=False, broke=False)
    after = profile.cell(sid, "loop_recovery")
    assert (after.h0_failures - before.h0_failures, after.rescues - before.rescues) == (2, 1)
    assert profile.cell(sid, "loop_recovery", learned=False) == before
    assert profile.learned[sid]["loop_recovery"].rescues == 1 and profile.updates == 2
    profile.update(sid, [], "pick_two_obj_and_place", rescued=False, broke=True)
    assert profile.learned[sid][SOLVED].breaks == 1
    with pytest.raises(ConfigError, match="both"):
        profile.update(sid, [], "x", rescued=True, broke=True)
    with pytest.raises(ConfigError, match="H0"):
        profile.update(sid, [], "x", rescued=True, broke=False, h0_failed=False)


def test_hook_effects_are_counted_per_point() -> None:
    """The snap patch rewrites near-miss commands (before_action) and hints after "Nothing happens"
    (after_feedback); the cell counts the effects by point."""
    h0 = h0_config()
    sibling = Sibling(name="snap", direction="action_validity", base=h0, patches=[load_patch(SNAP)])
    harness = sibling.harness()
    env = make_env("household", split="valid")

    async def go():  # type: ignore[no-untyped-def]
        try:
            replies = iter(["Action: lookk", "Action: fly to the moon"] * 20)
            agent = FunctionAgent(lambda request: next(replies))
            return [await EpisodeRunner(env, agent, harness).run(env.get_task(i), seed=1) for i in range(3)]
        finally:
            for overlay in harness.overlays:
                await overlay.close()

    records = asyncio.run(go())
    cell = ProfileCell()
    for record in records:
        cell.observe(record)
    fired: dict[str, int] = {}
    for record in records:
        for step in record.steps:
            for effect in step.effects:
                fired[effect["point"]] = fired.get(effect["point"], 0) + 1
    assert cell.effects == dict(sorted(fired.items())) and cell.observed == 3
    assert cell.effects.get("before_action", 0) > 0 and cell.effects.get("after_feedback", 0) > 0
    assert 0 < cell.invalid_rate < 1 and cell.mean_steps == sum(r.num_steps for r in records) / 3


def test_profile_save_load_and_errors(measured, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool, h0, sib = measured
    pool.save(tmp_path / "pool")
    profile = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    profile.update(pool.siblings[0].id, ["loop_recovery"], "x", rescued=True, broke=False)
    file = profile.save(pool)
    assert file == tmp_path / "pool" / "profile.json"
    stored = json.loads(file.read_text())
    assert stored["format"] == "reharness-profile-v1" and "rescue_ci" in json.dumps(stored)
    assert load_profile(pool) == profile == Profile.load(pool)

    text = file.read_text()
    file.write_text(text[: len(text) // 2])
    with pytest.raises(DataError, match=r"profile\.json is not valid JSON"):
        load_profile(pool)
    bad = json.loads(text)
    bad["cells"][pool.siblings[0].id]["loop_recovery"]["rescues"] = -1
    file.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"profile\.json is invalid: cells\..*loop_recovery\.rescues"):
        load_profile(pool)
    file.write_text(json.dumps(json.loads(text) | {"format": "v0"}))
    with pytest.raises(DataError, match="field 'format'"):
        load_profile(pool)
    file.write_text(text)
    other = small_pool(extra=[("tiny-window", "state_memory", {"history_window": 2})])
    other.save(tmp_path / "other")
    with pytest.raises(DataError, match="field 'pool_hash'.*another pool"):
        load_profile(other, file)
    with pytest.raises(DataError, match="another pool"):
        profile.save(other)
    (tmp_path / "other" / "profile.json").unlink(missing_ok=True)
    with pytest.raises(DataError, match="has no profile"):
        load_profile(other)
