"""Running a pool: H0 and every sibling on the same tasks and seeds, and what that measures.

One function serves evolve's validation profile, ``pool reanchor`` (a fresh profile for another policy)
and ``pool eval`` (the held-out table): :func:`run_pool` runs H0 and each sibling on one spec through the
ordinary batch executor (content-addressed run directories, so a rerun loads what finished), with prefix
reuse against H0's episodes.
"""

from __future__ import annotations

from pathlib import Path

from reharness.engineer.improve import Events
from reharness.measure.baseline import Baseline, Target, get_baseline, run_measured
from reharness.pool.pool import Pool
from reharness.pool.profile import Profile, measure_profile
from reharness.runtime.agents import Agent
from reharness.runtime.executor import RunSpec
from reharness.runtime.harness import Harness
from reharness.store.records import EpisodeRecord


async def run_paired(
    harness: Harness,
    base: Baseline,
    agent: Agent,
    runs: str | Path,
    label: str,
    events: Events,
    *,
    prefix_reuse: bool = True,
) -> list[EpisodeRecord]:
    """``harness`` on exactly ``base``'s tasks and seeds (stored under ``runs/siblings``, reusing H0's
    prefix): the one way evolve, reanchor and eval run a candidate or sibling."""
    result, _, _ = await run_measured(
        base.run.with_harness(harness),
        agent,
        Path(runs) / "siblings",
        replay=base.episodes if prefix_reuse else None,
        on_episode=events.batch(label, len(base.episodes)),
    )
    events.batch_done(label)
    return result.episodes


async def run_pool(
    pool: Pool,
    agent: Agent,
    spec: RunSpec,
    runs: str | Path,
    events: Events | None = None,
    *,
    prefix_reuse: bool = True,
) -> tuple[list[EpisodeRecord], dict[str, list[EpisodeRecord]]]:
    """H0's episodes and each sibling's (by id) on ``spec``'s tasks and seeds."""
    events = events or Events()
    label = f"H0 {spec.split}"
    h0 = await get_baseline(spec, agent, Target(pool.h0), runs, on_episode=events.batch(label, spec.n or 0))
    events.batch_done(label)
    out: dict[str, list[EpisodeRecord]] = {}
    for sibling in pool.siblings:
        harness = sibling.harness(max_workers=min(8, spec.concurrency))
        label = f"{sibling.name} {spec.split}"
        out[sibling.id] = await run_paired(harness, h0, agent, runs, label, events, prefix_reuse=prefix_reuse)
    return h0.episodes, out


async def measure_pool_profile(
    pool: Pool, agent: Agent, spec: RunSpec, runs: str | Path, events: Events | None = None
) -> Profile:
    """Run the pool on ``spec`` and measure its behaviour profile there (for the policy ``agent``)."""
    from reharness.pool.policy_ref import policy_ref

    h0, siblings = await run_pool(pool, agent, spec, runs, events)
    return measure_profile(pool, h0, siblings, policy=policy_ref(spec.agent, agent), split=spec.split)
