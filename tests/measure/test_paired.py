"""Paired evaluation on real household episodes: Δ_B, flips, bootstrap CI, cost, scoring rules, isolation.

The target is :class:`ClumsySolver`: the environment's expert, but with a seeded 60 % chance per step of
writing a near-miss command ("take the mug 1 from …"), which the env rejects ("Nothing happens"). With a tight
step limit it fails systematically, and the example patch that snaps near-misses to the closest admissible
command (``examples/patches/household_snap_to_admissible.yaml``) measurably rescues it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from clumsy import CONFIG, SNAP, SPEC, ClumsySolver, hook_patch

from reharness.measure.baseline import Target, get_baseline
from reharness.measure.paired import (
    BOOTSTRAP_RESAMPLES,
    Candidate,
    PairingError,
    bootstrap_ci,
    check_pairing,
    compare,
    evaluate_candidates,
    evaluate_patch,
)
from reharness.patches import Patch
from reharness.runtime import Harness, resolve_run
from reharness.runtime.agents import Agent
from reharness.store.run_store import RunStore


async def _baseline(tmp_path: Path, agent: Agent | None = None) -> Any:
    return await get_baseline(SPEC, agent or ClumsySolver(), Target(CONFIG), tmp_path)


async def test_snap_patch_is_measured_on_the_same_tasks_and_seeds(tmp_path: Path) -> None:
    baseline = await _baseline(tmp_path)
    result = await evaluate_patch(SNAP, baseline, ClumsySolver(), tmp_path, candidate_id="snap")
    patched = RunStore(result.run_dir or "").episodes()
    assert [(e.task_identity, e.seed) for e in patched] == baseline.planned
    assert result.status == "ok" and result.valid and result.patch_ids == [SNAP.identity]
    base_scores = [e.score for e in baseline.episodes]
    assert result.delta == pytest.approx(sum(e.score for e in patched) / 12 - sum(base_scores) / 12)
    assert result.delta > 0 and result.success_delta > 0
    assert result.rescued and not result.broken
    assert set(result.rescued) == {
        p.task_id for b, p in zip(baseline.episodes, patched, strict=True) if p.success and not b.success
    }
    assert result.ci_low <= result.delta <= result.ci_high and result.ci_resamples == BOOTSTRAP_RESAMPLES
    assert result.effect_steps > 0 and result.cost.episodes == 12
    assert result.cost.model_calls + result.cost.reused_calls == sum(
        1 for e in patched for s in e.steps if s.source == "policy"
    )
    again = await evaluate_patch(SNAP, baseline, ClumsySolver(), tmp_path, candidate_id="snap")
    assert again.model_dump(exclude={"cost"}) == result.model_dump(exclude={"cost"})  # loaded, same numbers


async def test_baseline_is_cached_per_policy_harness_and_tasks(tmp_path: Path) -> None:
    calls = [0]
    first = await _baseline(tmp_path, ClumsySolver(calls=calls))
    used = calls[0]
    second = await _baseline(tmp_path, ClumsySolver(calls=calls))
    assert not first.cached and second.cached and calls[0] == used > 0
    assert second.key == first.key and second.cost == first.cost
    assert [e.model_dump() for e in second.episodes] == [e.model_dump() for e in first.episodes]
    patched_target = await get_baseline(SPEC, ClumsySolver(calls=calls), Target(CONFIG, (SNAP,)), tmp_path)
    other_tasks = await get_baseline(
        SPEC.model_copy(update={"seed": 1}), ClumsySolver(), Target(CONFIG), tmp_path
    )
    assert len({first.key, patched_target.key, other_tasks.key}) == 3 and calls[0] > used


def test_bootstrap_interval_is_paired_and_deterministic() -> None:
    diffs = [1.0] * 3 + [0.0] * 17
    assert bootstrap_ci(diffs, seed=3) == bootstrap_ci(diffs, seed=3)
    low, high = bootstrap_ci(diffs)
    assert (low, high) == (0.0, 0.3)  # seeded resampling: the exact interval around the mean 0.15
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5) and bootstrap_ci([]) == (0.0, 0.0)


async def test_different_task_identities_are_refused(tmp_path: Path) -> None:
    baseline = await _baseline(tmp_path)
    moved_run = resolve_run(SPEC.model_copy(update={"seed": 5}), Harness(CONFIG))
    moved = dataclasses.replace(baseline, run=moved_run)  # recorded episodes, another batch's plan
    with pytest.raises(PairingError, match="cannot pair") as info:
        await evaluate_patch(SNAP, moved, ClumsySolver(), tmp_path)
    assert info.value.hint and "same env, split, n, seed" in info.value.hint
    with pytest.raises(PairingError, match="episode 0"):
        compare("x", baseline.episodes, list(reversed(baseline.episodes)))
    with pytest.raises(PairingError, match="11 episodes"):
        check_pairing(baseline.planned, baseline.planned[:-1])


async def test_invalid_and_degenerate_patches_score_zero(tmp_path: Path) -> None:
    baseline = await _baseline(tmp_path)
    agent = ClumsySolver()
    unsafe = hook_patch("before_action", "    import os\n    return None\n")
    wrong_env = Patch(dict(SNAP.hooks), SNAP.description, "shop")
    silent = hook_patch("after_feedback", "    nb['seen'] = 1\n    return None\n")
    missing = await evaluate_patch(None, baseline, agent, tmp_path, invalid_reason="reply had no <patch>")
    invalid = await evaluate_patch(unsafe, baseline, agent, tmp_path)
    other = await evaluate_patch(wrong_env, baseline, agent, tmp_path)
    degenerate = await evaluate_patch(silent, baseline, agent, tmp_path)
    assert (missing.status, missing.reason) == ("invalid", "reply had no <patch>")
    assert invalid.status == "invalid" and "import" in (invalid.reason or "")
    assert other.status == "invalid" and "'shop'" in (other.reason or "")
    assert degenerate.status == "degenerate" and "no hook effect" in (degenerate.reason or "")
    assert degenerate.run_dir and degenerate.cost.episodes == 12  # it ran, and scored as no patch
    stacked = await get_baseline(SPEC, agent, Target(CONFIG, (SNAP,)), tmp_path)  # SNAP fires in it
    degenerate_on_top = await evaluate_patch(silent, stacked, agent, tmp_path)
    assert degenerate_on_top.status == "degenerate" and degenerate_on_top.effect_steps == 0
    for r in (missing, invalid, other, degenerate):
        assert not r.valid and r.delta == 0.0 and not r.rescued and not r.broken
        assert r.patched_success == r.baseline_success == pytest.approx(baseline.result.success_rate)


async def test_crashing_and_hanging_candidates_cost_only_themselves(tmp_path: Path) -> None:
    baseline = await _baseline(tmp_path)
    hang = hook_patch(
        "before_decision", "    if ctx['step'] >= 2:\n        return {'message': 'PLEASE HANG'}\n"
    )
    crash = hook_patch("after_feedback", "    return {'type': 'inject_hint', 'message': 'keep going'}\n")
    candidates = [Candidate("snap", SNAP), Candidate("crash", crash), Candidate("twin", SNAP)]

    def on_episode(candidate_id: str, record: Any) -> None:
        if candidate_id == "crash":
            raise RuntimeError("progress display failed")

    results = await evaluate_candidates(candidates, baseline, ClumsySolver(), tmp_path, on_episode=on_episode)
    by_id = {r.candidate_id: r for r in results}
    assert [r.candidate_id for r in results] == ["snap", "crash", "twin"]
    assert by_id["crash"].status == "error" and "progress display failed" in (by_id["crash"].reason or "")
    alone = await evaluate_patch(SNAP, baseline, ClumsySolver(), tmp_path / "alone", candidate_id="snap")
    assert by_id["snap"].status == "ok" and by_id["snap"].delta == alone.delta > 0
    assert by_id["twin"].model_dump(exclude={"candidate_id"}) == by_id["snap"].model_dump(
        exclude={"candidate_id"}
    )
    (hung,) = await evaluate_candidates(
        [Candidate("hang", hang)], baseline, ClumsySolver(), tmp_path, timeout_s=1
    )
    assert hung.status == "timeout" and hung.delta == 0.0 and hung.reason == "timed out after 1 s"
