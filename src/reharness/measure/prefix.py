"""Prefix reuse: replay a baseline's recorded model outputs until a patched episode diverges.

A patched episode runs the same task with the same seeds as its baseline, so it is identical to the baseline
until the first step where a hook returns an effect. Until then the policy would be asked exactly the same
request, and a reproducible policy (per-request seeds, see :mod:`reharness.models.hf_backend`) would give
exactly the same reply — so :class:`PrefixReuseAgent` returns the recorded reply (text, tool calls, completion
token ids and log-probabilities) instead of calling the model. The environment is still stepped and the hooks
still run; only model calls are saved.

**When a request counts as "the same".** The runtime records, for every policy step, a digest of the
messages it sent (``StepRecord.context_digest``, :func:`reharness.runtime.context.context_digest`), and
the same function digests a live request. A request matches when its seed is the baseline's seed for that
episode and step (:func:`reharness.runtime.context.request_seed`,
which also pins the step index) *and* its digest equals the recorded one. From the first request of an
episode that does not match, the real agent answers every remaining request of that episode.

Assumption (documented, and tested with a context-deterministic agent): the policy's reply is a function of
the request (messages and seed). Outputs recorded as policy errors are never replayed (an error may be
transient); prompt token ids are not recorded, so replayed replies carry none. A replayed reply is marked
(``ChatResponse.replayed``, stored as ``PolicyOutput.replayed``), so a run's cost can be recounted from its
stored episodes alone (:func:`reharness.measure.baseline.stored_cost`).

A :class:`PrefixReuseAgent` without a baseline passes every request through (baselines run through it too,
so that their episodes are recorded the same way).
"""

from __future__ import annotations

from collections.abc import Iterable

from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.agents import Agent
from reharness.runtime.context import context_digest, request_seed
from reharness.store.records import EpisodeRecord, PolicyOutput

ReplayKey = tuple[int, str]


def replay_table(baseline: Iterable[EpisodeRecord]) -> dict[ReplayKey, PolicyOutput]:
    """Recorded outputs keyed by (request seed, context digest) — one entry per replayable policy step."""
    table: dict[ReplayKey, PolicyOutput] = {}
    for episode in baseline:
        for step in episode.steps:
            output = step.output
            if step.source != "policy" or step.context_digest is None or output is None or output.error:
                continue
            table[(request_seed(episode.seed, step.index), step.context_digest)] = output
    return table


def _response(output: PolicyOutput) -> ChatResponse:
    ids, logprobs = output.completion_token_ids, output.logprobs
    return ChatResponse(
        text=output.text,
        tool_calls=tuple(output.tool_calls),
        completion_token_ids=None if ids is None else tuple(ids),
        logprobs=None if logprobs is None else tuple(logprobs),
        attempts=0,
        replayed=True,
    )


class _EpisodeReplay(Agent):
    """The per-episode policy: replays while requests match, then calls the real episode policy."""

    def __init__(self, inner: Agent, table: dict[ReplayKey, PolicyOutput]) -> None:
        self.inner = inner
        self.table = table
        self.policy_id = inner.policy_id
        self.diverged = not table

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if not self.diverged:
            output = self.table.get((request.seed, context_digest(request.messages)))
            if output is not None:
                return _response(output)
            self.diverged = True  # first mismatch: the rest of the episode is new
        return await self.inner.complete(request)


class PrefixReuseAgent(Agent):
    """Wrap ``agent``: replay ``baseline``'s outputs for the unchanged prefix of each episode (replayed
    replies are marked, so costs are recounted from the stored episodes).

    With ``baseline=None`` (or empty) nothing is replayed. The wrapper does not own ``agent``: :meth:`close`
    leaves it open.
    """

    def __init__(self, agent: Agent, baseline: Iterable[EpisodeRecord] | None = None) -> None:
        self.agent = agent
        self.policy_id = agent.policy_id
        self.table = replay_table(baseline) if baseline is not None else {}

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        return _EpisodeReplay(self.agent.start_episode(env, protocol), self.table)

    def check_env(self, env: TextEnvLike) -> None:
        self.agent.check_env(env)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Outside an episode there is no prefix to reuse: call the agent."""
        return await self.agent.complete(request)
