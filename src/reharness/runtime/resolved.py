"""A run resolved once: kit, harness, environment options, tasks and seeds, as one typed object.

A :class:`RunSpec` is what the user asked for, in strings (an environment name,
a split, ``n``, a seed, ``--data``). :func:`resolve_run` turns it, once, into a :class:`ResolvedRun`: the kit
the name resolves to (built-in, entry point, ``module:attr`` or ``gym:ID``), the harness, the keyword
arguments the environment is built with, the chosen task indices and, per episode, its (task identity,
episode seed). The executor (:func:`~reharness.runtime.executor.run_resolved`), the cached baselines and the
paired comparison (:mod:`reharness.measure`), the pool and training take this object, so one measurement
resolves the names and builds its planning environment once instead of once per layer it passes through.

:meth:`ResolvedRun.with_harness` is the same batch under another harness (a patch, a sibling). When the
harness does not change the environment's options the tasks and the plan are reused without building an
environment; when it does, the batch is resolved again (and a plan that differs is refused by the paired
comparison, never compared).

The environment built to choose the tasks is kept for the executor's first episode worker
(:meth:`ResolvedRun.take_env`), so planning does not cost an extra environment. The plan (task identities)
is computed on first use: a plain run never pays for it, a measured run pays once.
"""

from __future__ import annotations

import random
import threading
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import ConfigError
from reharness.core.hashing import derive_seed
from reharness.envs.base import task_identity
from reharness.envs.kit import EnvKit
from reharness.envs.registry import data_loading_kits, get_kit
from reharness.runtime.dispatch import episode_seed
from reharness.runtime.env_reuse import IDLE_ENVS
from reharness.runtime.harness import Harness


class RunSpec(BaseModel):
    """What to run. Written (resolved) into ``run.json`` of every run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    agent: str
    split: str = "test"
    n: int | None = Field(None, gt=0, description="Episodes to run (None: all tasks of --data, else 50).")
    seed: int = 0
    data: str | None = None
    concurrency: int = Field(8, gt=0, le=1024)
    agent_options: dict[str, str] = Field(
        default_factory=dict, description="The model backend's options (device, gguf_file), when given."
    )

    def hash_fields(self, harness: Harness) -> dict[str, Any]:
        # agent options (``--device``, ``--gguf-file``) name another run only when given: every run made
        # without them keeps its id
        fields = self.model_dump(
            exclude={"concurrency"} | (set() if self.agent_options else {"agent_options"})
        )
        fields["harness"] = harness.identity
        return fields


#: A planned episode: (task identity, episode seed).
PlannedEpisode = tuple[str, int]


def env_kwargs(spec: RunSpec, harness: Harness, kit: EnvKit | None = None) -> dict[str, Any]:
    """The keyword arguments ``spec``'s environment is built with under ``harness`` (its ``env_options``,
    the split, or what the kit's ``--data`` loader makes of the task files)."""
    kwargs: dict[str, Any] = dict(harness.config.env_options)
    kit = kit or get_kit(spec.env)
    if spec.data:
        if kit.data_loader is None:
            raise ConfigError(
                f"--data loads real task files, and the {kit.name!r} kit has no loader for them",
                hint="drop --data, or use an environment whose kit loads task files "
                f"({', '.join(data_loading_kits())})",
            )
        return dict(kit.data_loader(spec.data, kwargs))
    kwargs["split"] = spec.split
    return kwargs


def select_tasks(env: TextEnvLike, spec: RunSpec) -> list[int]:
    """Seeded choice of task indices for the episodes of a run."""
    total = env.num_tasks()
    n = spec.n if spec.n is not None else (total if spec.data else 50)
    if n > total:
        raise ConfigError(f"--n {n} exceeds the {total} tasks available", hint=f"pass --n {total} or fewer")
    rng = random.Random(derive_seed("tasks", spec.seed))
    return rng.sample(range(total), n)


class ResolvedRun:
    """One batch, resolved: ``spec`` (what was asked), ``kit``, ``harness``, ``env_kwargs``, ``indices``
    (episode ``i`` plays task ``indices[i]`` with seed ``episode_seed(spec.seed, i)``) and, on first use,
    ``plan`` (each episode's task identity and seed). Build it with :func:`resolve_run`."""

    def __init__(
        self,
        spec: RunSpec,
        kit: EnvKit,
        harness: Harness,
        env_kwargs: dict[str, Any],
        indices: tuple[int, ...],
        spare_env: TextEnvLike | None = None,
    ) -> None:
        self.spec = spec
        self.kit = kit
        self.harness = harness
        self.env_kwargs = env_kwargs
        self.indices = indices
        self._spare = spare_env
        self._lock = threading.Lock()

    @property
    def env_name(self) -> str:
        return self.kit.name

    @property
    def seeds(self) -> tuple[int, ...]:
        """Each episode's seed, in episode order."""
        return tuple(episode_seed(self.spec.seed, i) for i in range(len(self.indices)))

    def make_env(self) -> TextEnvLike:
        """An environment of this batch (the kit's factory with ``env_kwargs``; a kept idle one when the kit
        reuses its environments, :mod:`reharness.runtime.env_reuse`)."""
        return IDLE_ENVS.take(self.kit, self.env_kwargs)

    def planning_env(self) -> TextEnvLike:
        """The environment built while resolving (kept: the executor takes it for its first episodes);
        for checks before the run, such as whether an agent can play this environment."""
        with self._lock:
            if self._spare is None:
                self._spare = self.make_env()
            return self._spare

    def take_env(self) -> TextEnvLike:
        """The environment built while resolving (once; the caller owns and closes it), else a new one."""
        with self._lock:
            env, self._spare = self._spare, None
        return env if env is not None else self.make_env()

    @cached_property
    def plan(self) -> tuple[PlannedEpisode, ...]:
        """(task identity, episode seed) of every episode, in episode order, computed without running."""
        with self._lock:
            env, owned = (self._spare, False) if self._spare is not None else (None, True)
            if env is None:
                env = self.make_env()
            try:
                plan = tuple(
                    (task_identity(env.env_id, env.version, env.get_task(index), seed), seed)
                    for index, seed in zip(self.indices, self.seeds, strict=True)
                )
            except BaseException:
                if owned:
                    env.close()
                raise
            if owned:
                IDLE_ENVS.give(self.kit, self.env_kwargs, env)
            return plan

    def with_harness(self, harness: Harness) -> ResolvedRun:
        """The same batch under ``harness``: tasks and plan reused when the environment's options are the
        same, else resolved again (same spec)."""
        kwargs = env_kwargs(self.spec, harness, self.kit)
        if kwargs != self.env_kwargs:
            return resolve_run(self.spec, harness)
        same = ResolvedRun(self.spec, self.kit, harness, self.env_kwargs, self.indices)
        if "plan" in self.__dict__:
            same.__dict__["plan"] = self.plan
        return same

    def close(self) -> None:
        """Close the planning environment if no executor took it."""
        with self._lock:
            env, self._spare = self._spare, None
        if env is not None:
            IDLE_ENVS.give(self.kit, self.env_kwargs, env)


def resolve_run(spec: RunSpec, harness: Harness) -> ResolvedRun:
    """Resolve ``spec`` under ``harness``: the kit, the environment options and the tasks (one environment
    is built to choose them and kept for the executor)."""
    kit = get_kit(spec.env)
    kwargs = env_kwargs(spec, harness, kit)
    env = IDLE_ENVS.take(kit, kwargs)
    try:
        indices = tuple(select_tasks(env, spec))
    except BaseException:
        env.close()
        raise
    return ResolvedRun(spec, kit, harness, kwargs, indices, spare_env=env)
