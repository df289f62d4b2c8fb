"""Batch execution: many episodes concurrently, appended to the store as each finishes.

:class:`RunSpec` is the resolved, validated configuration of a batch; its hash (without the fields that do
not change trajectories, such as concurrency) names the run, so re-running the same command resumes the same
run directory and completes only the missing episodes. Episode ``i`` gets seed ``derive_seed(seed, i)`` and
task ``indices[i]`` from a seeded sample of the split, so the same spec always gives the same trajectories
and a different seed gives different tasks.

An episode that ended in an infrastructure error (:func:`reharness.store.records.infrastructure_error`: the
model server or the environment failed, not the agent) counts as finished on resume, like any other;
``retry_errors=True`` runs those episodes again (the new record supersedes the old one in the store).
Every record (its JSON line, serialised once and written as it is) and the run metadata are redacted
(:mod:`reharness.core.secrets`) before they are stored, so a secret echoed by a server into an error message
never reaches the run directory.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from reharness import __version__
from reharness.core.errors import ConfigError, NoValidReplyError
from reharness.core.hashing import stable_hash
from reharness.core.secrets import redact_data
from reharness.runtime.agents import Agent
from reharness.runtime.dispatch import (
    EpisodeBatch,
    EpisodeExecutor,
    HarnessRoute,
    current_executor,
)
from reharness.runtime.harness import Harness
from reharness.runtime.resolved import ResolvedRun, RunSpec, resolve_run
from reharness.store.records import (
    EpisodeRecord,
    RunMeta,
    first_infrastructure_error,
    infrastructure_error,
    trajectory_digest,
)
from reharness.store.run_store import RunStore
from reharness.store.writer import EpisodeWriter


class BatchResult(BaseModel):
    run_id: str
    out: str
    episodes: list[EpisodeRecord]
    retried: int = Field(0, description="Episodes that had ended in an infrastructure error and were rerun.")

    def infrastructure_errors(self) -> dict[str, int]:
        """Episodes that ended in a policy error / an env error (not agent failures)."""
        kinds = [infrastructure_error(e) for e in self.episodes]
        return {"policy": kinds.count("policy"), "env": kinds.count("env")}

    def model_replies(self) -> tuple[int, int]:
        """(policy requests, requests that got a valid reply) over every stored step of the batch."""
        outputs = [s.output for e in self.episodes for s in e.steps if s.source == "policy" and s.output]
        return len(outputs), sum(1 for o in outputs if o.error is None)

    def require_replies(self, what: str) -> None:
        """Raise :class:`NoValidReplyError` (exit status 3 in the CLI) when no model request of the batch
        got a valid reply: the server was down, refused the key or kept failing."""
        requests, valid = self.model_replies()
        if requests and not valid:
            first = first_infrastructure_error(self.episodes)
            raise NoValidReplyError(
                f"none of the {requests} model requests of {what} got a valid reply"
                + (f" (first: {first})" if first else ""),
                hint="check that the model server is up and reachable at the agent's URL and that the API "
                "key is valid, then rerun the same command with --retry-errors",
            )

    @property
    def success_rate(self) -> float:
        return sum(e.success for e in self.episodes) / max(1, len(self.episodes))

    @property
    def mean_score(self) -> float:
        return sum(e.score for e in self.episodes) / max(1, len(self.episodes))

    @property
    def mean_steps(self) -> float:
        return sum(e.num_steps for e in self.episodes) / max(1, len(self.episodes))

    @property
    def digest(self) -> str:
        return trajectory_digest(self.episodes)


def planned_episodes(spec: RunSpec, harness: Harness) -> list[tuple[str, int]]:
    """(task identity, episode seed) of every episode ``spec`` will run, in episode order, without running."""
    resolved = resolve_run(spec, harness)
    try:
        return list(resolved.plan)
    finally:
        resolved.close()


async def run_batch(
    spec: RunSpec,
    agent: Agent,
    harness: Harness,
    out_dir: str | Path = "runs",
    overwrite: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    **options: Any,
) -> BatchResult:
    """Resolve ``spec`` under ``harness`` (:func:`~reharness.runtime.resolved.resolve_run`) and run it:
    :func:`run_resolved` with the same options."""
    resolved = resolve_run(spec, harness)
    try:
        return await run_resolved(resolved, agent, out_dir, overwrite, on_start, on_episode, **options)
    finally:
        resolved.close()


async def run_resolved(
    resolved: ResolvedRun,
    agent: Agent,
    out_dir: str | Path = "runs",
    overwrite: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    *,
    annotate: Callable[[EpisodeRecord], list[str]] | None = None,
    retry_errors: bool = False,
    route: HarnessRoute | None = None,
    group_commit: bool = True,
    executor: EpisodeExecutor | None = None,
) -> BatchResult:
    """Run (or resume) a batch and return every finished episode.

    ``resolved`` is the batch (:mod:`reharness.runtime.resolved`): its environment built to choose the
    tasks plays the first episodes. ``route`` picks each episode's harness (``resolved.harness`` is then the
    base the run is named after; every episode record names the harness it ran under).

    ``retry_errors`` reruns stored episodes that ended in an infrastructure error instead of keeping them.

    ``annotate(record)`` returns the episode's failure codes, stored in ``record.failure_codes`` before the
    record is written (the CLI passes :func:`reharness.failures.failure_codes`; the detectors live in a
    higher layer, so the runtime takes them as a parameter instead of importing them).

    Finished episodes are written by one :class:`EpisodeWriter` (group commit, off the loop); an episode
    counts as finished (``on_episode``, the result) only once it is on disk. ``group_commit=False`` writes
    each episode synchronously on the loop instead (the old path; ``benchmarks/bench_store.py`` compares).

    ``executor`` plays the episodes (:mod:`reharness.runtime.dispatch`; default: the one set by
    :func:`~reharness.runtime.dispatch.use_executor`, else this process's event loop;
    :class:`~reharness.runtime.ray_executor.RayExecutor`: Ray actors). It is not part of the run's hash:
    every executor writes the same records into the same run directory.
    """
    executor = executor or current_executor()
    if route is not None and not getattr(executor, "routes", False):
        raise ConfigError(
            f"the {executor.name!r} executor cannot play a routed run (--pool): it ignores the route",
            hint="use --executor local or --executor ray (both route), or drop --pool",
        )
    spec, harness, env_name, kwargs = resolved.spec, resolved.harness, resolved.env_name, resolved.env_kwargs
    indices = list(resolved.indices)
    first_env = resolved.take_env()
    try:
        agent.check_env(first_env)  # before the store creates anything
    except BaseException:
        first_env.close()
        raise
    fields = spec.hash_fields(harness)
    config_hash = stable_hash(fields if route is None else fields | {"route": route.identity})
    agent_slug = re.sub(r"[^A-Za-z0-9._-]+", "_", spec.agent.split("@", 1)[0]).strip("_")[:40]
    env_slug = re.sub(r"[^A-Za-z0-9._-]+", "_", env_name).strip("_")[:40]
    run_id = f"{env_slug}-{agent_slug}-{config_hash[:10]}"
    meta = RunMeta.model_validate(
        redact_data(
            dict(
                run_id=run_id,
                config_hash=config_hash,
                created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                package_version=__version__,
                env=env_name,
                policy_id=agent.policy_id,
                harness=harness.describe(),
                seed=spec.seed,
                n=len(indices),
                config=spec.model_dump() | {"env_kwargs": kwargs},
            )
        )
    )
    store = RunStore(Path(out_dir) / run_id)
    done = store.open(meta, overwrite=overwrite)
    retried = 0
    if retry_errors:  # episodes that ended in an infrastructure error are not done: run them again
        errored = [i for i, e in done.items() if infrastructure_error(e) is not None]
        retried = len(errored)
        done = {i: e for i, e in done.items() if i not in errored}
    missing = [i for i in range(len(indices)) if i not in done]
    if on_start:
        on_start(len(indices), len(done))
    results: dict[int, EpisodeRecord] = dict(done)

    async def deliver(record: EpisodeRecord, line: str) -> None:
        if group_commit:
            await writer.append(record, line)
        else:
            store.append(record, line)
        results[record.episode_index] = record
        if on_episode:
            on_episode(record)

    batch = EpisodeBatch(
        run_id, env_name, kwargs, indices, spec.seed, agent, harness, spec.concurrency, route, annotate
    )
    writer = EpisodeWriter(store)
    try:
        await executor.run_episodes(batch, missing, deliver, first_env)
    finally:
        await writer.close()
    for used in [harness, *(route.harnesses() if route is not None else [])]:
        for overlay in used.overlays:  # sandbox workers; they respawn lazily if the harness is reused
            await overlay.close()
    episodes = [results[i] for i in range(len(indices))]
    return BatchResult(run_id=run_id, out=str(store.run_dir), episodes=episodes, retried=retried)
