"""Shared builders for the profile/router tests: a small household pool and real paired episodes.

H0 is household's base harness with a 6-step budget, so the scripted ``solver`` fails the longer task types
(step_limit) and solves the short ones under it; siblings change only the budget, so their episodes really
rescue (a larger budget) and break (a smaller one) tasks. Everything runs in-process in well under a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from reharness.core.agent import Agent
from reharness.envs.registry import make_env
from reharness.failures import failure_codes
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
from reharness.pool.profile import Profile, ProfileCell, pool_hash
from reharness.runtime import EpisodeRunner, Harness, base_harness_config
from reharness.runtime.harness import HarnessConfig
from reharness.store.records import EpisodeRecord, StepRecord


def h0_config() -> HarnessConfig:
    return base_harness_config("household").model_copy(update={"step_limit": 6})


def small_pool(extra: Sequence[tuple[str, str, dict]] = ()) -> Pool:  # type: ignore[type-arg]
    """long-budget (loop_recovery, step_limit 30), short-budget (state_memory, 4), no-listing
    (action_validity), plus ``extra`` (name, direction, delta) siblings."""
    h0 = h0_config()
    specs = [
        ("long-budget", "loop_recovery", {"step_limit": 30}),
        ("short-budget", "state_memory", {"step_limit": 4}),
        ("no-listing", "action_validity", {"show_admissible": False}),
        *extra,
    ]
    siblings = [
        Sibling(name=n, direction=d, base=h0, delta=delta, description=f"{n} along {d}")
        for n, d, delta in specs
    ]
    return Pool("household", h0, siblings, PolicyRef(spec="solver"), builtin_directions())


def run_episodes(
    config: HarnessConfig, agent: Agent, n: int = 12, seed: int = 0, split: str = "valid"
) -> list[EpisodeRecord]:
    """``n`` real household episodes (tasks 0..n-1 of ``split``) under ``config``, failure codes annotated."""

    async def go() -> list[EpisodeRecord]:
        env = make_env("household", split=split)
        harness = Harness(config)
        out = []
        for i in range(n):
            record = await EpisodeRunner(env, agent, harness).run(env.get_task(i), seed=seed, episode_index=i)
            record.failure_codes = failure_codes(record)
            out.append(record)
        return out

    return asyncio.run(go())


def failed_record(
    codes: Sequence[str], task: str = "t1", task_type: str = "pick", steps: int = 3
) -> EpisodeRecord:
    """A failed episode with the given failure codes (for routing on constructed groups)."""
    step_list = [
        StepRecord(
            index=i, action=f"go to cabinet {i % 2}", observation="Nothing happens.", flags=["invalid_action"]
        )
        for i in range(steps)
    ]
    return EpisodeRecord(
        run_id="r",
        episode_index=0,
        seed=0,
        env="household",
        task_id=task,
        task_identity=f"id-{task}",
        task_type=task_type,
        instruction="put a mug in the cabinet",
        initial_observation="You are in a kitchen.",
        harness_id="h0",
        policy_id="solver",
        num_steps=steps,
        failure_codes=list(codes),
        steps=step_list,
    )


def cell(n: int, rescues: int, *, invalid: int = 0, steps: int = 0) -> ProfileCell:
    return ProfileCell(
        attempts=n,
        h0_failures=n,
        rescues=rescues,
        invalid_actions=invalid,
        steps=steps,
        observed=n if steps else 0,
    )


def profile_of(pool: Pool, cells: dict[str, dict[str, ProfileCell]], **kw) -> Profile:  # type: ignore[no-untyped-def]
    ids = {s.name: s.id for s in pool.siblings}
    return Profile(
        pool_hash=pool_hash(pool),
        policy=PolicyRef(spec="solver"),
        policy_hash="p0",
        split="valid",
        tasks=[],
        cells={ids[name]: rows for name, rows in cells.items()},
        **kw,
    )


#: Constructed evidence on action_validity: rescue rates 0.5 / 0.4 / 0.3;
#: invalid-action rates 0.5 / 0.3 / 0.05.
BEHAVIOUR = {
    "long-budget": {"action_validity": cell(10, 5, invalid=50, steps=100)},
    "no-listing": {"action_validity": cell(10, 4, invalid=30, steps=100)},
    "short-budget": {"action_validity": cell(10, 3, invalid=5, steps=100)},
}
