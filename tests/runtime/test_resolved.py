"""A run is resolved once: the kit, the tasks and the plan, then every measurement reuses them.

A counting environment (a real :class:`CounterEnv` that counts its constructions) shows how many
environments a measurement builds: before the run object, a baseline built one env to plan and another to
run, and every patched rerun built one more to check the plan again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from counter_env import CounterEnv

from reharness.envs.kit import EnvKit
from reharness.envs.registry import get_kit, register_kit
from reharness.measure.baseline import Target, get_baseline, run_measured
from reharness.measure.paired import PairingError, check_pairing, evaluate_patch
from reharness.patches import Patch
from reharness.runtime import Harness, HarnessConfig, RunSpec, SolverAgent, resolve_run, run_batch
from reharness.runtime.env_reuse import IDLE_ENVS, IdleEnvs
from reharness.runtime.executor import planned_episodes
from reharness.store.records import trajectory_digest


class CountedCounter(CounterEnv):
    """The counter environment, counting how many were built (per process, reset by each test)."""

    name: ClassVar[str] = "counted"
    built: ClassVar[int] = 0

    def __init__(self, **kwargs: object) -> None:
        type(self).built += 1
        super().__init__(**kwargs)  # type: ignore[arg-type]


register_kit(EnvKit(name="counted", env=CountedCounter, summary="counts its constructions"))
CONFIG = HarnessConfig(env="counted")
SPEC = RunSpec(env="counted", agent="solver", split="train", n=6, seed=3, concurrency=1)


@pytest.fixture(autouse=True)
def _reset_count() -> None:
    CountedCounter.built = 0


def test_resolution_chooses_the_tasks_once_and_hands_its_env_to_the_run() -> None:
    resolved = resolve_run(SPEC, Harness(CONFIG))
    assert resolved.kit.name == "counted" and len(resolved.indices) == 6 and CountedCounter.built == 1
    assert resolved.plan == tuple(planned_episodes(SPEC, Harness(CONFIG)))  # planning reused the env
    assert CountedCounter.built == 2  # planned_episodes resolved on its own
    env = resolved.take_env()
    assert resolved.take_env() is not env and CountedCounter.built == 3  # the spare is handed out once
    again = resolved.with_harness(Harness(CONFIG))
    assert again.indices == resolved.indices and again.plan == resolved.plan and CountedCounter.built == 3
    shorter = resolved.with_harness(Harness(HarnessConfig(env="counted", env_options={"max_steps": 4})))
    assert shorter.env_kwargs["max_steps"] == 4 and CountedCounter.built == 4  # other options: resolved again
    assert shorter.plan == resolved.plan  # max_steps is not part of a task's identity


async def test_a_run_builds_one_env_per_concurrent_episode(tmp_path: Path) -> None:
    result = await run_batch(SPEC, SolverAgent(), Harness(CONFIG), tmp_path)
    assert result.success_rate == 1.0 and CountedCounter.built == 1  # the resolving env played every episode


async def test_baseline_and_paired_rerun_resolve_once(tmp_path: Path) -> None:
    agent = SolverAgent()
    base = await get_baseline(SPEC, agent, Target(CONFIG), tmp_path)
    assert CountedCounter.built == 1  # planned, keyed and run on one environment
    patch = Patch(
        {"after_feedback": "def hook(ctx, nb):\n    nb['seen'] = 1\n    return None\n"}, "note", "counted"
    )
    paired = await evaluate_patch(patch, base, agent, tmp_path)
    assert paired.status == "degenerate" and CountedCounter.built == 2  # the rerun's own env, no re-planning
    sibling, _, _ = await run_measured(base.run.with_harness(Harness(CONFIG)), agent, tmp_path / "again")
    assert [(e.task_identity, e.seed) for e in sibling.episodes] == base.planned


async def test_a_baseline_recorded_for_other_tasks_is_refused(tmp_path: Path) -> None:
    base = await get_baseline(SPEC, SolverAgent(), Target(CONFIG), tmp_path)
    other = resolve_run(SPEC.model_copy(update={"seed": 4}), Harness(CONFIG))
    with pytest.raises(PairingError, match="cannot pair"):
        check_pairing(base.planned, other.plan)
    reused = await get_baseline(other, SolverAgent(), Target(CONFIG), tmp_path)  # a resolved batch is kept
    assert reused.run.indices == other.indices and reused.planned == list(other.plan)


class ReusedCounter(CounterEnv):
    """The counter environment of a kit that keeps its idle environments between batches."""

    name: ClassVar[str] = "counted-reused"
    built: ClassVar[int] = 0
    closed: ClassVar[int] = 0

    def __init__(self, **kwargs: object) -> None:
        type(self).built += 1
        super().__init__(**kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        type(self).closed += 1
        self.was_closed = True
        super().close()


register_kit(EnvKit(name="counted-reused", env=ReusedCounter, summary="keeps its envs", reuse_envs=True))
REUSED = HarnessConfig(env="counted-reused")


@pytest.fixture()
def idle() -> Iterator[IdleEnvs]:
    IDLE_ENVS.close_all()
    ReusedCounter.built = ReusedCounter.closed = 0
    yield IDLE_ENVS
    IDLE_ENVS.close_all()


async def test_a_reusing_kit_plays_the_next_batch_on_the_kept_environments(
    tmp_path: Path, idle: IdleEnvs
) -> None:
    spec = SPEC.model_copy(update={"env": "counted-reused", "concurrency": 3})
    first = await run_batch(spec, SolverAgent(), Harness(REUSED), tmp_path / "a")
    assert ReusedCounter.built == 3 and idle.idle() == 3 and ReusedCounter.closed == 0  # kept, not closed
    again = await run_batch(
        spec.model_copy(update={"seed": 4}), SolverAgent(), Harness(REUSED), tmp_path / "b"
    )
    assert ReusedCounter.built == 3 and idle.idle() == 3  # planned and played on the kept three
    idle.close_all()  # the same batch on new environments gives the same trajectories
    fresh = await run_batch(
        spec.model_copy(update={"seed": 4}), SolverAgent(), Harness(REUSED), tmp_path / "c"
    )
    assert ReusedCounter.built == 6 and trajectory_digest(fresh.episodes) == trajectory_digest(again.episodes)
    assert first.success_rate == again.success_rate == 1.0
    shorter = HarnessConfig(env="counted-reused", env_options={"max_steps": 4})
    await run_batch(spec, SolverAgent(), Harness(shorter), tmp_path / "d")
    assert ReusedCounter.built == 9  # other options: other environments
    idle.close_all()
    assert ReusedCounter.closed == 9 and idle.idle() == 0


async def test_a_batch_that_raises_keeps_none_of_its_environments(tmp_path: Path, idle: IdleEnvs) -> None:
    spec = SPEC.model_copy(update={"env": "counted-reused", "concurrency": 3})

    def fail(record: object) -> None:  # the store's caller fails after the first episode
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        await run_batch(spec, SolverAgent(), Harness(REUSED), tmp_path, on_episode=fail)
    assert ReusedCounter.built == 3 and idle.idle() == 0 and ReusedCounter.closed == 3


async def test_a_kit_that_does_not_opt_in_closes_its_environments(tmp_path: Path, idle: IdleEnvs) -> None:
    spec = SPEC.model_copy(update={"concurrency": 3})
    await run_batch(spec, SolverAgent(), Harness(CONFIG), tmp_path / "a")
    await run_batch(spec, SolverAgent(), Harness(CONFIG), tmp_path / "b")
    assert CountedCounter.built == 6 and idle.idle() == 0


def test_kept_environments_are_bounded_oldest_closed_first(idle: IdleEnvs) -> None:
    kit = get_kit("counted-reused")
    bounded = IdleEnvs(max_idle=2)
    envs = [bounded.take(kit, {"split": "train"}) for _ in range(3)]
    for env in envs:
        bounded.give(kit, {"split": "train"}, env)
    assert bounded.idle() == 2 and ReusedCounter.closed == 1 and getattr(envs[0], "was_closed", False)
    assert bounded.take(kit, {"split": "train"}) is envs[1]  # oldest kept first
    assert bounded.take(kit, {"split": "valid"}) not in envs and ReusedCounter.built == 4
