"""Training rollouts: real episodes of the policy being trained, through reharness's own runtime.

Policy GRPO needs, for every decision of every episode, the exact tokens the policy read and wrote, so that
the loss is computed on what was actually sampled (no re-tokenisation drift). :class:`RolloutEngine` runs
episodes with :class:`~reharness.runtime.episode.EpisodeRunner` — the same harness, hooks (in the sandbox),
parsing and env as ``reharness run`` — and wraps the policy in a per-episode recorder that keeps each call's
prompt ids, completion ids and sampling log-probabilities. The policy is an in-process Hugging Face backend
decoding with the trainer's live weights; requests of all concurrent episodes are micro-batched by it, so the
K rollouts of a group (which share their first prompt) decode together and reuse cached prefixes.

A rollout's seed fixes its sampling: the same weights, task and seed give the same episode, which is what
makes a resumed training step recompute exactly the rollouts it lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from reharness.core.agent import Agent
from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs.registry import make_env
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness
from reharness.store.records import EpisodeRecord

Role = Literal["h0", "resample", "rescue", "eval"]


@dataclass
class Turn:
    """One policy call: what it read (``prompt_ids``), what it sampled and the log-probabilities."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    flags: list[str] = field(default_factory=list)  # the step's flags (rewritten, forced, format_error …)
    executed: str | None = None  # the action the env executed at this step


@dataclass
class Rollout:
    """One episode of the policy with its token-level turns, tagged with the harness that generated it."""

    record: EpisodeRecord
    turns: list[Turn]
    harness: str  # "H0" or a sibling id
    role: Role
    task_index: int
    audited: bool | None = None  # rescue audit: does the success hold when replayed in H0's env?

    @property
    def success(self) -> bool:
        return bool(self.record.success) and self.audited is not False

    @property
    def tokens(self) -> int:
        return sum(len(t.prompt_ids) + len(t.completion_ids) for t in self.turns)


@dataclass(frozen=True)
class Job:
    """One episode to run: a task of the training split, a seed and the harness to run it under."""

    task_index: int
    seed: int
    harness: Harness
    label: str  # "H0" or the sibling id
    role: Role


class _Recorder(Agent):
    """Forwards calls to the policy and keeps every call's tokens (one recorder per episode)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = self.bound = inner
        self.policy_id = inner.policy_id
        self.calls: list[ChatResponse] = []

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        self.bound = self.inner.start_episode(env, protocol)  # scripted agents bind to the env here
        return self

    async def complete(self, request: ChatRequest) -> ChatResponse:
        response = await self.bound.complete(request)
        self.calls.append(response)
        return response


def turns_of(record: EpisodeRecord, calls: Sequence[ChatResponse]) -> list[Turn]:
    """Pair each policy call with its step (one step per call, in order) into :class:`Turn` objects; calls
    that returned no tokens (an error reply) are left out."""
    steps = [s for s in record.steps if s.output is not None]
    turns: list[Turn] = []
    for i, response in enumerate(calls):
        step = steps[i] if i < len(steps) and len(steps) == len(calls) else None
        if response.error or response.prompt_token_ids is None or not response.completion_token_ids:
            continue
        logprobs = list(response.logprobs or [0.0] * len(response.completion_token_ids))
        turns.append(
            Turn(
                prompt_ids=list(response.prompt_token_ids),
                completion_ids=list(response.completion_token_ids),
                logprobs=logprobs,
                flags=list(step.flags) if step is not None else [],
                executed=step.action if step is not None else None,
            )
        )
    return turns


@dataclass
class RolloutStats:
    """What rollouts cost: episodes, model calls, tokens and seconds, per role."""

    episodes: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, role: str, rollouts: Sequence[Rollout], seconds: float) -> None:
        self.episodes[role] = self.episodes.get(role, 0) + len(rollouts)
        self.calls[role] = self.calls.get(role, 0) + sum(len(r.turns) for r in rollouts)
        self.tokens[role] = self.tokens.get(role, 0) + sum(r.tokens for r in rollouts)
        self.seconds[role] = self.seconds.get(role, 0.0) + seconds

    def as_dict(self) -> dict[str, Any]:
        return {
            "episodes": dict(self.episodes),
            "model_calls": dict(self.calls),
            "tokens": dict(self.tokens),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


class RolloutEngine:
    """Runs batches of :class:`Job` concurrently (at most ``concurrency`` episodes at once) and returns
    their :class:`Rollout` objects in job order. Env instances are created on demand and reused."""

    def __init__(
        self,
        env_name: str,
        split: str,
        policy: Agent,
        *,
        concurrency: int = 64,
        annotate: Callable[[EpisodeRecord], list[str]] | None = None,
    ) -> None:
        self.env_name, self.split, self.policy = env_name, split, policy
        self.concurrency = max(1, concurrency)
        self.annotate = annotate
        self.stats = RolloutStats()
        self._envs: dict[str, list[Any]] = {}
        self._threads = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="train-env")

    def _env(self, harness: Harness) -> tuple[str, Any]:
        key = json.dumps(harness.config.env_options, sort_keys=True, default=str)
        free = self._envs.setdefault(key, [])
        if free:
            return key, free.pop()
        return key, make_env(self.env_name, split=self.split, **harness.config.env_options)

    async def _one(self, job: Job, index: int, gate: asyncio.Semaphore) -> Rollout:
        async with gate:
            key, env = self._env(job.harness)
            try:
                recorder = _Recorder(self.policy)
                runner = EpisodeRunner(env, recorder, job.harness, "train", executor=self._threads)
                task = await runner.env_call(env.get_task, job.task_index)
                record = await runner.run(task, job.seed, index)
            finally:
                self._envs[key].append(env)
        if self.annotate is not None:
            record.failure_codes = list(self.annotate(record))
        return Rollout(record, turns_of(record, recorder.calls), job.label, job.role, job.task_index)

    async def run(
        self, jobs: Sequence[Job], role: str | None = None, indices: Sequence[int] | None = None
    ) -> list[Rollout]:
        """Run ``jobs``; their costs are counted under ``role`` (default: each job's own role). Job ``i`` is
        episode ``indices[i]`` (default ``i``: a remote engine runs a slice of a step's jobs)."""
        if not jobs:
            return []
        started = time.perf_counter()
        gate = asyncio.Semaphore(self.concurrency)
        numbers = list(indices) if indices is not None else list(range(len(jobs)))
        out = list(
            await asyncio.gather(*(self._one(job, n, gate) for job, n in zip(jobs, numbers, strict=True)))
        )
        elapsed = time.perf_counter() - started
        self.stats.add(role or jobs[0].role, out, elapsed)
        return out

    async def close(self, harnesses: Sequence[Harness] = ()) -> None:
        """Close env instances, the env threads and the sandbox workers of ``harnesses``' overlays."""
        for envs in self._envs.values():
            for env in envs:
                env.close()
        self._envs.clear()
        self._threads.shutdown(wait=False, cancel_futures=True)
        for harness in harnesses:
            for overlay in harness.overlays:
                await overlay.close()


def params_hash(model: Any) -> str:
    """A content hash of a model's current weights (names the policy a re-anchored profile measured)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().float().numpy().tobytes())
    return digest.hexdigest()[:16]


def replay_in_h0(env_name: str, split: str, h0: Harness, rollout: Rollout) -> bool:
    """The rescue audit: replay a sibling rollout's executed actions in a fresh env under H0's options
    (same task, same seed) and say whether the success holds there. A sibling can make a task easier (a
    hint, a forced action the env accepts only through the sibling's rewrite); such a "success" that the
    actions alone do not reproduce is not what H0 would reward."""
    env = make_env(env_name, split=split, **h0.config.env_options)
    try:
        env.max_steps = max(env.default_max_steps, len(rollout.record.steps) + 1)
        task = env.get_task(rollout.task_index)
        env.reset(seed=rollout.record.seed, options={"task": task})
        info: dict[str, Any] = {}
        for step in rollout.record.steps:
            if step.action is None:
                continue
            _, _, terminated, truncated, info = env.step(step.action)
            if terminated or truncated:
                break
        return bool(info.get("success", False))
    finally:
        env.close()
