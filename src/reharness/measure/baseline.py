"""Frozen targets and cached baselines: what a patch is compared against, paid for once.

A :class:`Target` is the frozen harness a batch runs under: a base :class:`HarnessConfig` plus the patches
already accepted (stacked as overlays, in order). :meth:`Target.harness` builds *fresh* sandboxed overlays on
every call, so concurrent runs never share (and never close) each other's sandbox workers.

:func:`get_baseline` runs a target on a batch once and caches it in the run store under
``OUT/baselines/<key>/<run_id>/``, where ``key`` hashes (target policy id, harness id, the batch's task
identities and episode seeds). The identities are computed from the run spec before anything runs
(:func:`reharness.runtime.executor.planned_episodes`), so a second call with the same key loads the stored
episodes instead of rerunning them (an interrupted baseline resumes). Baselines are never shared across
targets: a different policy id or harness gives a different key.

Every measured run (baseline or patched) writes ``cost.json`` next to its episodes — model calls made and
saved, tokens, seconds — so a run loaded from the cache reports what it cost to produce. The counts are
recounted from the stored episodes (:func:`stored_cost`: every policy step records whether its reply was a
model call or replayed, and its tokens), not from the calls of the latest invocation, so a run killed and
resumed reports the same costs as one that ran through; only ``seconds`` (wall clock) is accumulated over
invocations, and the seconds of an invocation that was killed are lost.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from reharness.core.hashing import stable_hash
from reharness.patches.model import Patch
from reharness.runtime.agents import Agent
from reharness.runtime.executor import BatchResult, RunSpec, run_resolved
from reharness.runtime.harness import Harness, HarnessConfig
from reharness.runtime.resolved import ResolvedRun, resolve_run
from reharness.store.records import EpisodeRecord

COST_FILE = "cost.json"
EpisodeCallback = Callable[[EpisodeRecord], None]


class RunCost(BaseModel):
    """What a run cost: episodes run, model calls made and saved by prefix reuse, tokens, seconds."""

    episodes: int = 0
    model_calls: int = 0
    reused_calls: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0

    def __add__(self, other: RunCost) -> RunCost:
        def tokens(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return RunCost(
            episodes=self.episodes + other.episodes,
            model_calls=self.model_calls + other.model_calls,
            reused_calls=self.reused_calls + other.reused_calls,
            prompt_tokens=tokens(self.prompt_tokens, other.prompt_tokens),
            completion_tokens=tokens(self.completion_tokens, other.completion_tokens),
            seconds=self.seconds + other.seconds,
        )


def stored_cost(episodes: Sequence[EpisodeRecord], seconds: float = 0.0) -> RunCost:
    """The cost of producing ``episodes``, recounted from their step records.

    ``model_calls`` counts policy steps whose reply came from the model (errors included), ``reused_calls``
    those replayed from a baseline's prefix; tokens are summed over model calls that reported them.
    """
    calls = reused = 0
    prompt: int | None = None
    completion: int | None = None
    for episode in episodes:
        for step in episode.steps:
            output = step.output
            if step.source != "policy" or output is None:
                continue
            if output.replayed:
                reused += 1
                continue
            calls += 1
            if output.prompt_tokens is not None:
                prompt = (prompt or 0) + output.prompt_tokens
            if output.completion_token_ids is not None:
                completion = (completion or 0) + len(output.completion_token_ids)
    return RunCost(
        episodes=len(episodes),
        model_calls=calls,
        reused_calls=reused,
        prompt_tokens=prompt,
        completion_tokens=completion,
        seconds=seconds,
    )


@dataclass(frozen=True)
class Target:
    """The frozen harness of a target: base config plus accepted patches, stacked in order."""

    config: HarnessConfig
    patches: tuple[Patch, ...] = ()

    def harness(self, extra: Sequence[Patch] = (), max_workers: int = 4, limits: Any = None) -> Harness:
        """A harness with fresh sandboxed overlays for ``patches`` then ``extra``."""
        from reharness.patches.overlay import PatchOverlay

        overlays = [PatchOverlay(p, limits, max_workers=max_workers) for p in (*self.patches, *extra)]
        return Harness(self.config, overlays)

    def with_patch(self, patch: Patch) -> Target:
        return Target(self.config, (*self.patches, patch))

    @property
    def identity(self) -> str:
        return self.harness().identity  # overlays start no worker until first called


def baseline_key(policy_id: str, harness_id: str, episodes: Sequence[tuple[str, int]]) -> str:
    """Cache key of a baseline: (target policy, harness, task identities and seeds)."""
    return stable_hash({"policy": policy_id, "harness": harness_id, "episodes": [list(e) for e in episodes]})


async def run_measured(
    resolved: ResolvedRun,
    agent: Agent,
    out_dir: str | Path,
    *,
    replay: Sequence[EpisodeRecord] | None = None,
    on_episode: EpisodeCallback | None = None,
    retry_errors: bool = False,
) -> tuple[BatchResult, RunCost, bool]:
    """Run (or load) the batch ``resolved`` through a call-counting (and, with ``replay``, prefix-reusing)
    agent.

    Returns the batch, its accumulated cost and whether every episode was already stored (a cache hit).
    ``retry_errors`` reruns stored episodes that ended in an infrastructure error (see ``run_batch``).
    """
    from reharness.failures.detectors import failure_codes
    from reharness.measure.prefix import PrefixReuseAgent

    wrapped = PrefixReuseAgent(agent, replay)
    state = {"finished": 0, "total": -1}

    def on_start(total: int, finished: int) -> None:
        state["finished"], state["total"] = finished, total

    started = time.perf_counter()
    try:
        result = await run_resolved(
            resolved,
            wrapped,
            out_dir,
            False,
            on_start,
            on_episode,
            annotate=failure_codes,
            retry_errors=retry_errors,
        )
    finally:
        resolved.close()  # the planning env, if the run did not take it (a cancelled candidate)
        for overlay in resolved.harness.overlays:  # also on cancellation (a timed-out candidate)
            await overlay.close()
    cost_path = Path(result.out) / COST_FILE
    previous = RunCost.model_validate_json(cost_path.read_text("utf-8")) if cost_path.exists() else RunCost()
    cached = state["finished"] == state["total"]
    if cached and cost_path.exists():
        return result, previous, True
    # counts from the stored episodes (the same after a restart); wall-clock seconds add up per invocation
    total = stored_cost(result.episodes, previous.seconds + time.perf_counter() - started)
    cost_path.write_text(json.dumps(total.model_dump(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return result, total, cached


@dataclass
class Baseline:
    """A target's recorded batch: the resolved batch (:class:`ResolvedRun`), the target, the episodes and
    their cost. Patched and sibling reruns take ``run.with_harness(...)``: the same tasks and seeds."""

    run: ResolvedRun
    target: Target
    result: BatchResult
    key: str
    cost: RunCost = field(default_factory=RunCost)
    cached: bool = False

    @property
    def spec(self) -> RunSpec:
        return self.run.spec

    @property
    def episodes(self) -> list[EpisodeRecord]:
        return self.result.episodes

    @property
    def planned(self) -> list[tuple[str, int]]:
        return [(e.task_identity, e.seed) for e in self.episodes]

    def require_replies(self, label: str) -> None:
        """Raise :class:`NoValidReplyError` if no model request of the batch got a valid reply."""
        self.result.require_replies(f"the {label} batch")


async def get_baseline(
    spec: RunSpec | ResolvedRun,
    agent: Agent,
    target: Target,
    out_dir: str | Path,
    *,
    on_episode: EpisodeCallback | None = None,
    max_workers: int = 4,
    retry_errors: bool = False,
) -> Baseline:
    """The baseline of ``target`` on ``spec``'s batch (a spec, resolved here once, or a batch already
    resolved, whose tasks it keeps): loaded from ``OUT/baselines/<key>`` or run once."""
    harness = target.harness(max_workers=max_workers)
    resolved = resolve_run(spec, harness) if isinstance(spec, RunSpec) else spec.with_harness(harness)
    key = baseline_key(agent.policy_id, harness.identity, resolved.plan)
    result, cost, cached = await run_measured(
        resolved,
        agent,
        Path(out_dir) / "baselines" / key,
        on_episode=on_episode,
        retry_errors=retry_errors,
    )
    return Baseline(run=resolved, target=target, result=result, key=key, cost=cost, cached=cached)
