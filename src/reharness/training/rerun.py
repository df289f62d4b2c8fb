"""The GRPO reward of the engineer: the paired rerun of each completion's patch on its packet's batch.

TRL calls :class:`PairedRerunReward` with one batch of completions (``num_generations`` per packet, the
``packet_id`` column repeated alongside). Completions are grouped by packet; each group's replies are parsed
and validated like any engineer reply (:func:`reharness.engineer.base.finish_reply`) and scored together by
:func:`reharness.measure.paired.evaluate_candidates` — concurrently, on the packet's recorded tasks and
seeds, against one cached baseline (:func:`~reharness.measure.baseline.get_baseline`, shared with the data
collection when ``runs_dir`` is the same). The reward is Δ_B of a valid (executable, non-degenerate) patch and
0 for anything else: unparsable, invalid, degenerate, crashed or timed out — no format bonus. Groups of
different packets run concurrently too. Before a batch is rerun its baseline's (task identity, seed) pairs
are checked against the packet's recorded ones, so a reward is never measured on other tasks.

The reruns run on one event loop in a background thread, owned by the reward object, so agents with their
own loop-bound machinery (micro-batching model backends) live on one loop for the whole training. Every
scored completion (reply, status, Δ) is appended to ``log_path`` (JSON lines) and the time spent in reruns
is accumulated, for the GRPO time breakdown. Per call it logs (through TRL's ``log_metric``) the share of
valid completions (``rerun/valid_frac``) and of packet groups with non-zero reward variance
(``rerun/variance_frac``).

``reward_control="shuffled"`` is the shuffled-reward control of ``experiment r1``: the rewards are measured
exactly as above (same reruns, same compute), then permuted within each packet's group by a seeded uniform
permutation (:func:`shuffle_within_groups`), so each reply gets the Δ of a random reply of its group — the
group's reward statistics stay, the link between a reply and its outcome goes. The log keeps both the measured
``delta`` and the ``reward`` the loss saw.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from reharness.core.hashing import derive_seed

if TYPE_CHECKING:
    from reharness.measure.baseline import Baseline
    from reharness.measure.paired import PairedResult
    from reharness.runtime.agents import Agent


#: characters of each scored reply kept in the rewards log (a repair program fits many times over)
REPLY_LOG_CHARS = 2000


def completion_text(completion: Any) -> str:
    """The reply text of a TRL completion (conversational: a list of messages; standard: a string)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content") or "")
    return str(completion)


def variance_share(rewards: Sequence[float], packet_ids: Sequence[str]) -> float:
    """The share of packet groups whose rewards are not all equal (the groups that give GRPO a gradient)."""
    groups: dict[str, list[float]] = {}
    for reward, pid in zip(rewards, packet_ids, strict=True):
        groups.setdefault(pid, []).append(reward)
    varied = sum(1 for values in groups.values() if max(values) - min(values) > 1e-9)
    return varied / max(1, len(groups))


def shuffle_within_groups(rewards: Sequence[float], packet_ids: Sequence[str], seed: int) -> list[float]:
    """``rewards`` permuted within each packet's group (uniformly, seeded by ``seed`` and the packet id);
    every group keeps its multiset of rewards."""
    import random

    groups: dict[str, list[int]] = {}
    for i, pid in enumerate(packet_ids):
        groups.setdefault(pid, []).append(i)
    out = list(rewards)
    for pid, idx in groups.items():
        order = list(idx)
        random.Random(derive_seed(seed, pid)).shuffle(order)
        for target, source in zip(idx, order, strict=True):
            out[target] = rewards[source]
    return out


async def row_baseline(row: dict[str, Any], agent: Agent, runs_dir: str | Path) -> Baseline:
    """The baseline of a packet row's batch (loaded from ``runs_dir`` when collected there), checked to be on
    the row's recorded tasks and seeds."""
    from reharness.measure.baseline import Target, get_baseline
    from reharness.measure.paired import check_pairing
    from reharness.runtime import RunSpec
    from reharness.runtime.harness import HarnessConfig

    spec = RunSpec.model_validate(row["spec"])
    target = Target(HarnessConfig.model_validate(row["harness"]))
    base = await get_baseline(spec, agent, target, Path(runs_dir))
    recorded = [(t["task_identity"], t["seed"]) for t in row["tasks"]]
    check_pairing(recorded, base.planned, "batch rerun for GRPO")
    return base


class PairedRerunReward:
    """TRL reward function: Δ_B of each completion's patch by paired rerun (see the module docstring).

    ``rows`` are packet rows (:func:`reharness.training.data.packet_rows`); ``agents`` maps env → target agent
    (default: built from each row's recorded agent spec on first use).
    """

    __name__ = "paired_rerun"

    def __init__(
        self,
        rows: Sequence[dict[str, Any]],
        runs_dir: str | Path,
        *,
        agents: Mapping[str, Agent] | None = None,
        timeout_s: float | None = 1800.0,
        prefix_reuse: bool = True,
        log_path: str | Path | None = None,
        reward_control: Literal["none", "shuffled"] = "none",
        seed: int = 0,
    ) -> None:
        self.reward_control, self.seed = reward_control, seed
        self.rows = {r["packet_id"]: r for r in rows}
        self.runs_dir = Path(runs_dir)
        self.agents: dict[str, Agent] = dict(agents or {})
        self._own_agents = agents is None
        self.timeout_s = timeout_s
        self.prefix_reuse = prefix_reuse
        self.log_path = Path(log_path) if log_path else None
        self.seconds = 0.0
        self.calls = 0
        self._baselines: dict[str, Baseline] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="paired-rerun", daemon=True)
        self._thread.start()

    def results(self, texts: list[str], packet_ids: list[str]) -> list[PairedResult]:
        """:meth:`score` run on the reward's event loop (callable from synchronous code)."""
        return asyncio.run_coroutine_threadsafe(self.score(texts, packet_ids), self._loop).result()

    def __call__(
        self, prompts: list[Any], completions: list[Any], packet_id: list[str], **kwargs: Any
    ) -> list[float]:
        started = time.perf_counter()
        texts = [completion_text(c) for c in completions]
        results = self.results(texts, list(packet_id))
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", 0) or 0)
        measured = [r.delta if r.valid else 0.0 for r in results]
        rewards = measured
        if self.reward_control == "shuffled":  # seeded by the step: a resumed run permutes the same way
            rewards = shuffle_within_groups(measured, list(packet_id), derive_seed(self.seed, step))
        elapsed = time.perf_counter() - started
        self.seconds += elapsed
        self.calls += 1
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            log_metric("rerun/valid_frac", sum(r.valid for r in results) / max(1, len(results)))
            log_metric("rerun/variance_frac", variance_share(measured, list(packet_id)))
            log_metric("rerun/seconds", elapsed)
        self._log(step, list(packet_id), results, texts, rewards)
        return rewards

    def _log(
        self,
        step: int,
        packet_ids: list[str],
        results: list[PairedResult],
        texts: list[str],
        rewards: list[float],
    ) -> None:
        if self.log_path is None:
            return
        lines = [
            json.dumps(
                {
                    "step": step,
                    "packet_id": pid,
                    "candidate": r.candidate_id,
                    "status": r.status,
                    "reason": (r.reason or "")[:300] or None,
                    "delta": r.delta,
                    "reward": reward,
                    "rescued": len(r.rescued),
                    "broken": len(r.broken),
                    "patch_id": r.patch_ids[0] if r.patch_ids else None,
                    "reply": text[:REPLY_LOG_CHARS],
                },
                sort_keys=True,
            )
            for pid, r, text, reward in zip(packet_ids, results, texts, rewards, strict=True)
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

    async def score(self, texts: list[str], packet_ids: list[str]) -> list[PairedResult]:
        """Paired results of ``texts`` (replies), each on its packet's batch; groups run concurrently."""
        groups: dict[str, list[int]] = {}
        for i, pid in enumerate(packet_ids):
            groups.setdefault(pid, []).append(i)
        scored = await asyncio.gather(
            *(self.score_group(pid, [texts[i] for i in idx]) for pid, idx in groups.items())
        )
        results: list[PairedResult | None] = [None] * len(texts)
        for idx, group in zip(groups.values(), scored, strict=True):
            for i, result in zip(idx, group, strict=True):
                results[i] = result
        return [r for r in results if r is not None]

    def agent(self, row: dict[str, Any]) -> Agent:
        env = row["env"]
        if env not in self.agents:
            from reharness.runtime.agent_specs import make_agent

            self.agents[env] = make_agent(row["spec"]["agent"])
        return self.agents[env]

    async def baseline(self, packet_id: str) -> Baseline:
        """The packet's batch baseline (cached; loaded from ``runs_dir`` when collected there)."""
        if packet_id not in self._baselines:
            row = self.rows[packet_id]
            self._baselines[packet_id] = await row_baseline(row, self.agent(row), self.runs_dir)
        return self._baselines[packet_id]

    async def score_group(self, packet_id: str, texts: list[str]) -> list[PairedResult]:
        """The paired results of one packet's completions (same tasks, same seeds, one baseline)."""
        from reharness.engineer.base import finish_reply
        from reharness.failures.packets import FailurePacket
        from reharness.measure.paired import Candidate, evaluate_candidates

        row = self.rows[packet_id]
        packet = FailurePacket.model_validate_json(row["packet"])
        base = await self.baseline(packet_id)
        proposals = [finish_reply(text, packet, {"index": i}) for i, text in enumerate(texts)]
        candidates = [
            Candidate(f"s{self.calls}-{packet_id[:6]}-{i}", p.patch, None if p.patch else f"[{p.error_code}]")
            for i, p in enumerate(proposals)
        ]
        return await evaluate_candidates(
            candidates,
            base,
            self.agent(row),
            self.runs_dir,
            timeout_s=self.timeout_s,
            evidence=packet.leakage_evidence(),
            prefix_reuse=self.prefix_reuse,
        )

    def close(self) -> None:
        """Close the agents this reward built and stop its event loop."""

        async def shutdown() -> None:
            if self._own_agents:
                for agent in self.agents.values():
                    await agent.close()

        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop.close()
