"""Re-anchoring during policy training: the pool's profile measured again with the live weights, at the
rollout temperature, with several samples per task.

A profile measured greedily says little about rescues that sample at temperature 1.0 (on db every greedy
router score was 0, and every decision a tie-break). :func:`reanchor_profile` runs H0 and every sibling on
``n`` valid tasks ``samples`` times, each pass with its own request seeds, under an agent that samples at the
rollout temperature, and merges the passes into one profile that records its temperature and sample count.
:func:`temperature_mismatch` is the check the training session runs on the profile it starts from.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reharness.core.agent import Agent
from reharness.core.env_protocol import TextEnvLike
from reharness.core.hashing import derive_seed
from reharness.core.types import ChatRequest, ChatResponse
from reharness.engineer.improve import Events
from reharness.pool.pool import Pool
from reharness.pool.profile import Profile, measured_temperature
from reharness.store.records import EpisodeRecord


class SampledAt(Agent):
    """``inner`` asked at ``temperature`` (top-p ``top_p``) with request seeds of pass ``sample``."""

    def __init__(self, inner: Agent, temperature: float, top_p: float, sample: int) -> None:
        self.inner, self.temperature, self.top_p, self.sample = inner, temperature, top_p, sample
        self.policy_id = f"{inner.policy_id}@t{temperature:g}/s{sample}"

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        bound = self.inner.start_episode(env, protocol)
        return self if bound is self.inner else SampledAt(bound, self.temperature, self.top_p, self.sample)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        sampling = request.sampling.model_copy(update={"temperature": self.temperature, "top_p": self.top_p})
        seed = derive_seed(request.seed, "profile-sample", self.sample) if self.sample else request.seed
        return await self.inner.complete(request.model_copy(update={"sampling": sampling, "seed": seed}))


async def reanchor_profile(
    pool: Pool,
    backend: Agent,
    *,
    env: str,
    label: str,
    weights: str | None,
    n: int,
    seed: int,
    concurrency: int,
    temperature: float,
    top_p: float,
    samples: int,
    runs: Path,
    events: Events | None = None,
) -> tuple[Profile, dict[str, int]]:
    """The pool's profile for the live weights and what it cost (``episodes``, ``model_calls``,
    ``tokens``: calls replayed from H0's prefix are free), measured on ``n`` valid tasks ``samples`` times
    at ``temperature`` (``events``: the batches' progress, as ``pool reanchor`` draws it)."""
    from reharness.pool.measure import run_pool
    from reharness.pool.pool import PolicyRef
    from reharness.pool.profile import measure_profile, merge_profiles
    from reharness.runtime.dispatch import LocalExecutor, use_executor
    from reharness.runtime.executor import RunSpec

    profiles: list[Profile] = []
    cost = {"episodes": 0, "model_calls": 0, "tokens": 0}
    for sample in range(samples):
        agent = SampledAt(backend, temperature, top_p, sample)
        spec = RunSpec(
            env=env, agent=f"{label}@t{temperature:g}/s{sample}", split="valid", n=n, seed=seed,
            concurrency=concurrency,
        )  # fmt: skip
        with use_executor(LocalExecutor()):  # the live weights are in this process
            h0, siblings = await run_pool(pool, agent, spec, runs, events)
        for key, value in episode_costs([*h0, *(r for v in siblings.values() for r in v)]).items():
            cost[key] += value
        profiles.append(
            measure_profile(pool, h0, siblings, policy=PolicyRef(spec=label, hash=weights), split="valid")
        )
    profile = merge_profiles(profiles)
    profile.temperature, profile.samples = temperature, samples
    return profile, cost


def episode_costs(records: Iterable[EpisodeRecord]) -> dict[str, int]:
    """Episodes, model calls and tokens (prompt + completion, where recorded) of stored episodes; a step
    replayed from a baseline's prefix made no call and costs nothing."""
    cost = {"episodes": 0, "model_calls": 0, "tokens": 0}
    for record in records:
        cost["episodes"] += 1
        for step in record.steps:
            out = step.output
            if out is not None and not out.replayed:
                cost["model_calls"] += 1
                cost["tokens"] += (out.prompt_tokens or 0) + len(out.completion_token_ids or [])
    return cost


def temperature_mismatch(profile: Profile, pool: Pool, temperature: float) -> str | None:
    """A loud warning when the profile's episodes ran at another temperature than the rollouts (else None)."""
    measured = measured_temperature(profile, pool)
    if abs(measured - temperature) < 1e-9:
        return None
    return (
        f"WARNING: the pool's profile was measured at temperature {measured:g}, the rescue rollouts sample "
        f"at {temperature:g}: the router's scores read evidence from another sampling regime (a greedy "
        "profile can score every sibling 0 and leave every decision to tie-breaks). Fix: --reanchor-at-start "
        "(measure it at the rollout temperature with --profile-samples per task before step 1), or measure "
        f"it once with `reharness pool reanchor POOL --agent SPEC --temperature {temperature:g} --samples 2`."
    )
