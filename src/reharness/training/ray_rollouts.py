"""``train policy --executor ray``: the step's rollouts played by Ray actors that hold copies of the policy.

Policy GRPO samples its rollouts from the weights being trained, so an actor cannot load the policy once
and keep it, as the episode actors of ``run`` do. This is the weight-sync design of verl and SkyRL, on
reharness's own rollout code:

- each :class:`PolicyActor` loads the starting model directory once (architecture and tokenizer) and
  wraps it in its own micro-batching :class:`~reharness.models.hf_backend.HFBackend` and
  :class:`~reharness.training.rollouts.RolloutEngine`: the same ``EpisodeRunner``, harness, hooks (in the
  actor's sandbox workers), parsing and per-call recorder (prompt ids, completion ids, log-probs) as a
  local run. The model directory must be readable by every actor: the driver reads it once and ships its
  files (config, tokenizer, weights) through the object store when it is at most :data:`SHIP_LIMIT`
  (the tiny models, small HF models), and an actor on a node without that path loads the shipped copy; a
  larger directory must be at the same path on every node (a shared filesystem). An actor that cannot
  load it stops the start with an ``executor_error`` that says so, and no actor is left running;
- before the rollouts of an optimizer step, the driver puts the trainer's ``state_dict`` in Ray's object
  store **once** (:meth:`RayRolloutEngine.sync`) and every actor loads it, tagged with the weights' content
  hash (:func:`~reharness.training.policy_grpo.params_hash`). An actor checks the hash of what it loaded,
  and refuses to play jobs tagged with other weights, so a stale actor fails loudly instead of training on
  off-policy rollouts;
- :meth:`RayRolloutEngine.run` sends each GRPO group (consecutive jobs with the same task and harness)
  whole to one actor, groups spread round-robin, with the episode numbers the local engine would use;
  the actors return the recorded :class:`~reharness.training.rollouts.Rollout` objects, which the driver
  turns into training rows exactly as it does for local rollouts.

Cost per step: one ``state_dict`` serialisation into the object store (the model's size; shared memory on
one machine, one transfer per node on a cluster), one load and one hash pass per actor. What stays on
the driver: the optimizer, the rescue audit (a replay of scripted actions) and the router; re-anchoring
the profile (``--reanchor-every``) plays its episodes on the driver's live backend. An actor lost during a
step stops the training with an ``executor_error``; rerunning the command resumes from the last checkpoint.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError
from reharness.runtime.harness import Harness
from reharness.runtime.ray_actors import RayExecutorError, call_actors, end_actors, start_actors
from reharness.training.rollouts import Job, Rollout, RolloutStats

#: model directories up to this size are shipped to the actors through Ray's object store
SHIP_LIMIT = 1 << 30


class StaleWeightsError(RayExecutorError):
    """A rollout actor was asked to play jobs for weights it does not hold (or loaded other weights)."""

    def __init__(self, message: str) -> None:
        super().__init__(
            message,
            hint="a policy actor holds other weights than the trainer: rerun the same command to resume from "
            "the last checkpoint; if it happens again, report it (the weight sync is broken)",
        )


class PolicyActor:
    """One Ray actor: a copy of the policy, its backend and rollout engine (see the module docstring)."""

    def __init__(
        self,
        model_dir: str,
        env_name: str,
        split: str,
        policy_id: str,
        concurrency: int,
        files: dict[str, bytes] | None = None,
    ) -> None:
        from reharness.failures import failure_codes
        from reharness.models.hf_backend import HFBackend, load_model_dir
        from reharness.training.rollouts import RolloutEngine, params_hash

        self.unpacked: str | None = None
        if files is not None and not (Path(model_dir) / "config.json").is_file():  # not on this node
            self.unpacked = model_dir = tempfile.mkdtemp(prefix="reharness-policy-")
            for name, data in files.items():
                (Path(model_dir) / name).write_bytes(data)
        self.tokenizer, self.model = load_model_dir(model_dir)
        self.model.eval()
        self.backend = HFBackend(  # decodes as its model directory declares (``AGENT_DEFAULTS``)
            model_dir, policy_id=policy_id, loaded=(self.tokenizer, self.model), max_batch_size=concurrency
        )
        self.engine = RolloutEngine(
            env_name, split, self.backend, concurrency=concurrency, annotate=failure_codes
        )
        self.hash = params_hash(self.model)
        #: one copy per harness (by identity): every step ships the jobs' harnesses again, and a patched
        #: sibling's sandbox workers belong to the copy that first ran its hooks
        self.harnesses: dict[str, Harness] = {}

    async def weights(self) -> str:
        """The content hash of the weights this actor decodes with."""
        return self.hash

    async def load(self, refs: list[Any], tag: str) -> str:
        """Load the ``state_dict`` in ``refs[0]`` (fetched from the object store) and check its hash."""
        import ray

        from reharness.training.rollouts import params_hash

        def load() -> str:
            state = ray.get(refs[0])
            try:
                self.model.load_state_dict(state)
            except RuntimeError as exc:  # missing/unexpected keys, other shapes
                raise ConfigError(
                    f"the policy actors cannot load the trainer's weights: {str(exc).splitlines()[0]}",
                    hint="the trained model must have the architecture of the model directory the actors "
                    "load (the same --agent)",
                ) from None
            self.model.eval()
            return params_hash(self.model)

        got = await asyncio.get_running_loop().run_in_executor(None, load)
        self.backend.weights_changed()  # cached key/values belong to the old weights
        self.hash = got
        if got != tag:
            raise StaleWeightsError(f"loaded weights hash {got}, the driver sent {tag}")
        return got

    async def run(self, jobs: list[Job], indices: list[int], tag: str) -> list[Rollout]:
        """Play ``jobs`` (episodes ``indices``) with the weights tagged ``tag``."""
        if tag != self.hash:
            raise StaleWeightsError(f"this actor holds weights {self.hash}, the jobs are for {tag}")
        kept = [
            replace(job, harness=self.harnesses.setdefault(job.harness.identity, job.harness)) for job in jobs
        ]
        return await self.engine.run(kept, indices=indices)

    async def close(self) -> None:
        await self.engine.close(list(self.harnesses.values()))
        await self.backend.close()
        if self.unpacked is not None:
            shutil.rmtree(self.unpacked, ignore_errors=True)


def model_files(model_dir: str) -> dict[str, bytes] | None:
    """The files of a model directory (config, tokenizer, weights), to ship through the object store; None
    when it is not readable here or larger than :data:`SHIP_LIMIT` (then every node must read the path)."""
    root = Path(model_dir)
    try:
        files = [p for p in root.iterdir() if p.is_file()]
        if sum(p.stat().st_size for p in files) > SHIP_LIMIT:
            return None
        return {p.name: p.read_bytes() for p in files}
    except OSError:
        return None


def job_groups(jobs: Sequence[Job]) -> list[list[int]]:
    """Positions of ``jobs`` cut into groups: consecutive jobs with the same task and harness (a GRPO
    group, whose rollouts share their first prompt: one actor decodes them together)."""
    groups: list[list[int]] = []
    for i, job in enumerate(jobs):
        first = jobs[groups[-1][0]] if groups else None
        if first is not None and (first.task_index, first.label) == (job.task_index, job.label):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


class RayRolloutEngine:
    """The driver's side: a :class:`~reharness.training.rollouts.RolloutEngine` whose episodes run on
    :class:`PolicyActor` processes (same ``run``/``close``/``stats`` interface)."""

    def __init__(
        self,
        executor: Any,
        model_dir: str,
        env_name: str,
        split: str,
        policy_id: str,
        *,
        concurrency: int = 64,
    ) -> None:
        self.executor, self.ray = executor, executor.ray
        self.options = executor.options
        self.env_name, self.split = env_name, split  # the rescue audit replays in this env and split
        self.args = (model_dir, env_name, split, policy_id, concurrency)
        #: the model directory's files, shipped to actors on nodes that cannot read it (read now: a
        #: directory that later disappears, e.g. a temporary one, still starts the actors)
        self.files = model_files(model_dir)
        self.stats = RolloutStats()
        self.actors: list[Any] = []
        self.tag: str | None = None  #: the hash of the weights every actor holds
        self.syncs = 0  #: state_dicts put in the object store

    async def start(self) -> None:
        """Start the policy actors (each loads the model directory) and wait until every one is up."""
        await self.executor.release()  # hand the command's episode actors' CPUs to the policy actors
        self.executor.connect()
        actor = self.ray.remote(PolicyActor).options(
            num_cpus=self.options.actor_cpus, num_gpus=self.options.actor_gpus, max_concurrency=8
        )
        files = None if self.files is None else self.ray.put(self.files)  # once, however many actors
        actors = [actor.remote(*self.args, files) for _ in range(self.options.actors)]
        await asyncio.to_thread(
            start_actors,
            self.ray,
            actors,
            lambda a: a.weights.remote(),
            self.options.startup_timeout_s,
            what="policy actors",
            too_slow_hint="lower --ray-actors, or add machines to the cluster",
            failed_hint=f"the policy actors could not load {self.args[0]!r} on their node: check that "
            "it loads here (--agent hf:DIR); a directory over "
            f"{SHIP_LIMIT >> 20} MiB is not shipped, so it must be readable at the same path on every node "
            "(a shared filesystem); or run with --executor local",
        )
        self.actors = actors

    async def sync(self, model: Any) -> str:
        """Make every actor hold ``model``'s current weights (one ``ray.put`` when they changed)."""
        from reharness.training.rollouts import params_hash

        if not self.actors:
            await self.start()
        tag = params_hash(model)
        if tag == self.tag:
            return tag
        state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
        refs = [self.ray.put(state)]  # once per step, however many actors fetch it
        self.syncs += 1
        await self._call(lambda position, actor: actor.load.remote(refs, tag))
        self.tag = tag
        return tag

    async def _call(self, send: Any) -> list[Any]:
        return await call_actors(
            self.ray,
            asyncio.gather(*[send(p, a) for p, a in enumerate(self.actors)]),
            what="a policy rollout actor",
            hint="check the actors' logs (`ray logs`) for out-of-memory kills; rerun the same command to "
            "resume from the last checkpoint",
        )

    async def run(
        self, jobs: Sequence[Job], role: str | None = None, indices: Sequence[int] | None = None
    ) -> list[Rollout]:
        """Run ``jobs`` on the actors (weights synced by :meth:`sync`); rollouts come back in job order."""
        if not jobs:
            return []
        if self.tag is None:
            raise RuntimeError("RayRolloutEngine.run before sync(model): the actors hold no known weights")
        started = time.perf_counter()
        numbers = list(indices) if indices is not None else list(range(len(jobs)))
        shares: list[list[int]] = [[] for _ in self.actors]
        for g, group in enumerate(job_groups(jobs)):
            shares[g % len(self.actors)].extend(group)
        tag = self.tag
        parts = await self._call(
            lambda p, actor: actor.run.remote(
                [jobs[i] for i in shares[p]], [numbers[i] for i in shares[p]], tag
            )
        )
        out: list[Rollout | None] = [None] * len(jobs)
        for share, rollouts in zip(shares, parts, strict=True):
            for i, rollout in zip(share, rollouts, strict=True):
                out[i] = rollout
        done = [r for r in out if r is not None]
        self.stats.add(role or jobs[0].role, done, time.perf_counter() - started)
        return done

    async def close(self, harnesses: Sequence[Harness] = ()) -> None:
        """Close the actors' envs and sandbox workers (of their own harness copies: ``harnesses``, the
        driver's, have none), then end the actors (the Ray connection stays: the executor owns it)."""
        actors, self.actors = self.actors, []
        self.tag = None
        await asyncio.to_thread(end_actors, self.ray, actors)
