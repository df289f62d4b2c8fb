"""The Ray executor: a batch's episodes played by long-lived Ray actors, stored by the driver.

``reharness run --executor ray`` (:func:`reharness.cli.scale.build_executor`) builds one
:class:`RayExecutor`: it connects to a Ray cluster (or starts a local instance) and keeps ``actors``
:class:`EpisodeActor` processes for its whole life, across every batch it runs. Each actor owns its env
instances, the thread pool their steps run in, its copy of the harness (so the sandbox workers of hook
patches are the actor's own, spawned lazily by the existing overlay code) and its copy of the agent: an
in-process model (``tiny:``/``hf:``) is shipped as its recipe and loaded once per actor, then micro-batches
the requests of the actor's concurrent episodes; an ``openai:`` agent calls its server from the actor.

A routed run (``run --pool``) is routed on the driver, which holds the pool state and the router: it picks
each task's harness and sends its position among the route's harnesses (shipped once per batch) with the
episode.

The driver keeps everything that names and stores the run (:func:`~reharness.runtime.executor.run_batch`):
it sends each missing episode (task index, episode index, seed) to an actor with a free slot and appends
every record that comes back through the same group-commit writer as the local executor, so the run
directory, its resume semantics and the ``trajectory_digest`` do not depend on the executor.

Failure handling: an actor that dies mid-run (killed, out of memory, its node lost) loses only episodes
that were never delivered; they are sent again to a replacement actor, so the run still ends with every
episode exactly once. An exception raised by an episode itself (a bug, since episode errors are data)
stops the batch as it would locally. A driver killed mid-run takes its actors with it; rerunning the
command resumes from the store.

``ray`` is optional (``pip install 'reharness[ray]'``); this module imports it only when an executor starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import ConfigError
from reharness.core.secrets import redact
from reharness.envs.registry import make_env
from reharness.runtime.agents import Agent
from reharness.runtime.dispatch import Annotate, Deliver, EpisodeBatch, episode_seed, finished_line
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness
from reharness.runtime.ray_actors import RayExecutorError, end_actors, lost_errors, start_actors, task_error
from reharness.store.records import EpisodeRecord

INSTALL_HINT = "pip install 'reharness[ray]'"
#: the most episodes one actor plays at once (--concurrency is split over the actors, up to this)
MAX_SLOTS = 256
#: episodes queued on an actor beyond the ones it plays: the next one starts without a driver round trip
PREFETCH = 2


def require_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` that names the install command."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs the optional 'ray' package, which is not installed",
            hint=f"{INSTALL_HINT}, or run with --executor local",
        ) from None
    return ray


class RayOptions(BaseModel):
    """How the Ray executor connects and how many actors it keeps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(
        None,
        description="'auto' (a running cluster, e.g. after `ray start --head`), 'local' (a new local "
        "instance), HOST:PORT or ray://HOST:PORT; None: $RAY_ADDRESS if set, "
        "else a cluster started on this machine with `ray start`, else a new local instance.",
    )
    actors: int = Field(2, ge=1, le=4096, description="Long-lived episode actors.")
    actor_cpus: float = Field(1.0, ge=0, description="CPUs Ray reserves for each actor.")
    actor_gpus: float = Field(0.0, ge=0, description="GPUs Ray reserves for each actor (in-process models).")
    max_actor_deaths: int | None = Field(
        None, ge=0, description="Actor deaths tolerated in one executor's life (None: 4 per actor)."
    )
    startup_timeout_s: float = Field(300.0, gt=0, description="How long to wait for the actors to start.")
    runtime_env: dict[str, Any] | None = Field(None, description="Ray runtime_env of a new connection.")


@dataclass
class _BatchContext:
    """What every actor needs of one batch (shipped once per batch through Ray's object store)."""

    run_id: str
    env_name: str
    env_kwargs: dict[str, Any]
    harness: Harness
    agent: Agent
    annotate: Annotate | None
    slots: int  # episodes an actor plays at once (more may wait in its queue: see PREFETCH)
    #: a routed run's harnesses (``route.harnesses()``): the driver chooses one per task, by position
    routed: list[Harness] = field(default_factory=list)


@dataclass
class _ActorBatch:
    context: _BatchContext
    playing: asyncio.Semaphore
    envs: list[Any] = field(default_factory=list)


class EpisodeActor:
    """One Ray actor (an async actor: its episodes share one event loop, a batch's ``slots`` at a time).

    The envs, the harness copy and the agent copy of a batch live until :meth:`end_batch`; an in-process
    model inside the agent is loaded once per actor process (the backend's unpickling reuses a model
    already loaded from the same recipe), so batch after batch finds it loaded. Env steps run in worker
    threads (created on demand, at most one per concurrent episode)."""

    def __init__(self) -> None:
        self.steps = ThreadPoolExecutor(max_workers=MAX_SLOTS, thread_name_prefix="env")
        self.batches: dict[str, asyncio.Future[_ActorBatch]] = {}

    def ready(self) -> bool:
        return True

    async def _fetch(self, ref: Any) -> Any:
        import ray

        loop = asyncio.get_running_loop()  # unpickling may load a model: off the actor's event loop
        return await loop.run_in_executor(None, ray.get, ref)

    async def _batch(self, key: str, ref: Any) -> _ActorBatch:
        if key not in self.batches:

            async def load() -> _ActorBatch:
                context = await self._fetch(ref)
                return _ActorBatch(context, asyncio.Semaphore(context.slots))

            self.batches[key] = asyncio.ensure_future(load())
        return await self.batches[key]

    async def episode(
        self, key: str, refs: list[Any], task_index: int, index: int, seed: int, routed: int = -1
    ) -> str:
        """Play episode ``index`` (task ``task_index``, seed ``seed``; under the batch's harness, or the
        routed harness at position ``routed``); return its stored JSON line."""
        batch = await self._batch(key, refs[0])
        ctx = batch.context
        harness = ctx.routed[routed] if routed >= 0 else ctx.harness
        async with batch.playing:
            env = batch.envs.pop() if batch.envs else make_env(ctx.env_name, **ctx.env_kwargs)
            try:
                runner = EpisodeRunner(env, ctx.agent, harness, ctx.run_id, executor=self.steps)
                task = await runner.env_call(env.get_task, task_index)
                record = await runner.run(task, seed, index)
            finally:
                batch.envs.append(env)
        return finished_line(record, ctx.annotate)

    async def end_batch(self, key: str) -> None:
        """Close the envs and sandbox workers of a finished batch."""
        loaded = self.batches.pop(key, None)
        if loaded is None or not loaded.done() or loaded.exception() is not None:
            return
        batch = loaded.result()
        for env in batch.envs:
            env.close()
        for harness in [batch.context.harness, *batch.context.routed]:
            for overlay in harness.overlays:
                await overlay.close()
        # the agent copy is dropped, not closed: an in-process model in it is shared by the actor's
        # batches (loaded once per process), and an HTTP client's pool closes when it is collected

    async def close(self) -> None:
        for key in list(self.batches):
            await self.end_batch(key)
        self.steps.shutdown(wait=False, cancel_futures=True)


class RayExecutor:
    """Plays batches on long-lived Ray actors (see the module docstring). Start it lazily with the first
    batch, or explicitly with :meth:`start`; :meth:`close` ends its actors (and a Ray instance it
    started)."""

    name = "ray"
    routes = True  #: routed runs: the driver picks each task's harness, the actor plays it

    def __init__(self, options: RayOptions | None = None) -> None:
        self.options = options or RayOptions()
        self.ray = require_ray()
        #: one actor handle per position; a dead actor's position gets a replacement
        self.actors: list[Any] = []
        self.retried = 0  #: episodes sent again after their actor died
        self.deaths = 0  #: actors replaced
        self._started_ray = False
        #: concurrent batches (improve's candidates, a reward's own loop thread) start the actors once;
        #: a threading lock, since one executor serves several event loops
        self._starting = threading.Lock()

    # ------------------------------------------------------------------ actors
    def connect(self) -> None:
        """Join the cluster named by the options (or start a local instance) unless already connected."""
        ray = self.ray
        if ray.is_initialized():
            return
        address = self.options.address
        kwargs: dict[str, Any] = dict(
            include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False
        )
        if self.options.runtime_env:
            kwargs["runtime_env"] = self.options.runtime_env
        try:
            ray.init(address=address, **kwargs)
        except Exception as exc:  # noqa: BLE001 - ray raises bare Exception on a start-up timeout
            where = "start a local Ray instance" if address in (None, "local") else f"connect to {address!r}"
            raise RayExecutorError(
                f"could not {where}: {exc}",
                hint="start one with `ray start --head` (then --ray-address auto), pass the address of a "
                "running cluster (HOST:PORT or ray://HOST:PORT), or omit --ray-address for a local instance; "
                "on an overloaded machine, retry when it is quieter",
            ) from None
        self._started_ray = True

    def _spawn(self) -> Any:
        remote = self.ray.remote(EpisodeActor).options(
            num_cpus=self.options.actor_cpus,
            num_gpus=self.options.actor_gpus,
            max_concurrency=MAX_SLOTS + PREFETCH + 4,  # episodes (playing, queued), end_batch, close
        )
        return remote.remote()

    async def start(self) -> None:
        """Start the actors and wait until every one is up (once: a started executor returns at once)."""
        await asyncio.to_thread(self._start_once)

    def _start_once(self) -> None:
        with self._starting:
            if self.actors:
                return
            self.connect()
            actors = [self._spawn() for _ in range(self.options.actors)]
            start_actors(
                self.ray,
                actors,
                lambda actor: actor.ready.remote(),
                self.options.startup_timeout_s,
                what="Ray episode actors",
                too_slow_hint=f"each actor reserves {self.options.actor_cpus:g} CPUs: lower --ray-actors, "
                "or add machines to the cluster",
                failed_hint="check the actors' logs (`ray logs`); every node needs reharness (and the "
                "agent's packages) installed, e.g. through the cluster's image or a runtime_env",
            )
            self.actors = actors

    def _replace(self, position: int, dead: Any) -> None:
        if self.actors[position] is not dead:  # already replaced by another episode of that actor
            return
        self.deaths += 1
        limit = self.options.max_actor_deaths
        if self.deaths > (4 * self.options.actors if limit is None else limit):
            raise RayExecutorError(
                f"{self.deaths} Ray actors died during this run",
                hint="check the actors' logs (`ray logs`, or /tmp/ray/session_latest/logs) for out-of-memory "
                "kills or crashes; the finished episodes are stored, so rerun the same command to resume",
            )
        with contextlib.suppress(Exception):  # unreachable rather than dead: make sure it is gone
            self.ray.kill(dead)
        self.actors[position] = self._spawn()

    def _put(self, context: _BatchContext) -> Any:
        """The batch context in the object store (once per batch; every actor fetches it once)."""
        try:
            return self.ray.put(context)
        except (TypeError, ValueError, AttributeError) as exc:  # e.g. a lock or a socket without a recipe
            raise ConfigError(
                f"the agent {context.agent.policy_id!r} or the harness cannot be sent to Ray actors: {exc}",
                hint="make the agent picklable (e.g. __reduce__ that rebuilds it from its arguments), "
                "or run with --executor local",
            ) from None

    async def __aenter__(self) -> RayExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ batches
    async def run_episodes(
        self, batch: EpisodeBatch, missing: list[int], deliver: Deliver, spare_env: TextEnvLike
    ) -> None:
        route = batch.route
        if route is None or not missing:
            spare_env.close()  # the actors build their own envs (a routed run's driver keeps one)
        if not missing:
            return
        try:
            await self._run_missing(batch, missing, deliver, spare_env)
        finally:
            if route is not None:
                spare_env.close()

    async def _run_missing(
        self, batch: EpisodeBatch, missing: list[int], deliver: Deliver, spare_env: TextEnvLike
    ) -> None:
        route = batch.route
        await self.start()
        ray = self.ray
        key = uuid.uuid4().hex
        slots = min(MAX_SLOTS, math.ceil(batch.concurrency / len(self.actors)))
        routed = route.harnesses() if route is not None else []
        positions = {h.identity: p for p, h in reversed(list(enumerate(routed)))}
        context = _BatchContext(
            batch.run_id,
            batch.env_name,
            batch.env_kwargs,
            batch.harness,
            batch.agent,
            batch.annotate,
            slots,
            routed,
        )
        refs = [self._put(context)]  # in a list: the actors fetch it once per batch, not per episode
        in_flight: set[Any] = set()
        # each actor gets its slots plus PREFETCH queued episodes, so it never idles for a round trip
        free: asyncio.Queue[int] = asyncio.Queue()
        for _ in range(slots + PREFETCH):
            for position in range(len(self.actors)):
                free.put_nowait(position)
        lost = lost_errors(ray)

        async def choose(i: int) -> int:
            """A routed run: the driver's route picks task ``i``'s harness before it is sent."""
            if route is None:
                return -1
            task = spare_env.get_task(batch.indices[i])
            chosen = await route.harness_for(task, i)
            if chosen.identity not in positions:
                raise ConfigError(
                    f"route {route.identity!r} chose harness {chosen.name!r} ({chosen.identity}) for task "
                    f"{batch.indices[i]}, which is not one of the harnesses it declares",
                    hint="a route's harness_for must return one of route.harnesses()",
                )
            return positions[chosen.identity]

        async def one(i: int) -> None:
            harness = await choose(i)
            while True:
                position = await free.get()
                actor = self.actors[position]
                seed = episode_seed(batch.seed, i)
                ref = actor.episode.remote(key, refs, batch.indices[i], i, seed, harness)
                in_flight.add(ref)
                try:
                    line = await ref
                    break
                except lost:  # the actor died before the episode came back: run it again elsewhere
                    self.retried += 1
                    self._replace(position, actor)
                except ray.exceptions.RayTaskError as exc:  # the episode itself raised (a bug)
                    raise task_error(exc) from None
                finally:
                    in_flight.discard(ref)
                    free.put_nowait(position)
            clean = redact(line)  # the driver's secrets too
            await deliver(EpisodeRecord.model_validate_json(clean), clean)

        tasks = [asyncio.ensure_future(one(i)) for i in missing]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # a failing episode or a cancelled batch: stop the others, here and remote
            for ref in list(in_flight):
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            for actor in self.actors:
                actor.end_batch.remote(key)  # fire and forget; a dead actor has nothing to close

    async def release(self) -> None:
        """End the actors (their CPUs go back to the cluster) but keep the connection: the next batch
        starts new ones. ``train policy`` hands the command's CPUs to its policy actors this way."""
        actors, self.actors = self.actors, []
        await asyncio.to_thread(end_actors, self.ray, actors)

    async def close(self) -> None:
        """Close every actor's envs, sandbox workers and agents, end the actors, and shut down a Ray
        instance this executor started."""
        ray = self.ray
        await self.release()
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
            self._started_ray = False
