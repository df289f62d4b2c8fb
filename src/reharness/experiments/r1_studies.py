"""The further studies of ``reharness experiment r1`` (issue contract §3), on trained engineers.

- **Transfer to an unseen target** (:func:`transfer`): the main-table evaluation (every method, the same
  held-out test batches protocol) with another frozen target (``--transfer-agent``, e.g. tiny M when the
  engineer was trained against tiny S); stored under ``OUT/transfer``.
- **Held-out generalisation** (:func:`generalisation`): per seed, a source batch of the test split whose
  first ``failures`` failures (``max_traces``) form the packet; each engineer writes one patch, which is
  measured by paired rerun on a *different*, larger held-out batch of the test split (``heldout_n`` tasks,
  another batch seed), so the patch must work on tasks it has not seen. (The generated test split is large;
  the two batches are drawn independently, so a task can occur in both, rarely.)
- **Hook ablation** (:func:`ablation`): every valid GRPO patch of the main table rerun with each hook
  position removed (a patch left without hooks is no patch); success over all test tasks per variant.

Each study appends its records to a JSON-lines file as they finish and resumes from it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.experiments.r1_stages import Evaluator, R1Config, R1Row, aggregate, load_records

if TYPE_CHECKING:
    from reharness.runtime.agents import Agent

STUDY_METHODS: tuple[str, ...] = ("operators", "sft", "grpo")


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def transfer(
    config: R1Config,
    agent_spec: str,
    agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
) -> tuple[list[R1Row], dict[str, float]]:
    """The main table of every method against another target ``agent_spec`` (engineers unchanged)."""
    notify(f"transfer: evaluating on the unseen target {agent_spec}")
    out = Path(config.out) / "transfer"
    records = asyncio.run(Evaluator(config, agents, notify, agent_spec=agent_spec, out=out).run())
    return aggregate(config, records)


async def _generalisation(
    ev: Evaluator, seeds: int, failures: int, heldout_n: int, path: Path
) -> list[dict[str, Any]]:
    from reharness.engineer.paired import evaluate_patch

    done = load_records(path)
    try:
        for env in ev.config.envs:
            for s in range(seeds):
                _, packet = await ev.baseline(
                    env, "heldout-source", s, n=max(2 * failures, 20), max_traces=failures
                )
                base, _ = await ev.baseline(env, "heldout-target", s, n=heldout_n)
                for method in STUDY_METHODS:
                    key = f"{env}/{s}/{method}"
                    if key in done:
                        continue
                    ev.notify(f"generalisation: {env} seed {s} {method}")
                    proposal = await ev.propose(method, packet, base.spec.seed)
                    reason = None if proposal.patch else f"[{proposal.error_code}] {proposal.error}"
                    result = await evaluate_patch(
                        proposal.patch, base, ev.agent(env), ev.out / "runs", candidate_id=key,
                        invalid_reason=reason, evidence=packet.leakage_evidence(),
                    )  # fmt: skip
                    record = {
                        "key": key, "env": env, "seed": s, "method": method, "status": result.status,
                        "source_failures": packet.header.failures_included, "n": result.n,
                        "baseline_success": result.baseline_success,
                        "patched_success": result.patched_success,
                        "delta": result.success_delta, "ci_low": result.success_ci_low,
                        "ci_high": result.success_ci_high, "broken": len(result.broken),
                    }  # fmt: skip
                    done[key] = record
                    _append(path, record)
    finally:
        await ev.close()
    return list(done.values())


def generalisation(
    config: R1Config,
    *,
    seeds: int = 3,
    failures: int = 10,
    heldout_n: int = 50,
    agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """``failures`` failures → one patch → a held-out batch, ``seeds`` times: per-method mean Δ success."""
    ev = Evaluator(config, agents, notify)
    path = Path(config.out) / "generalisation.jsonl"
    records = asyncio.run(_generalisation(ev, seeds, failures, heldout_n, path))
    summary: dict[str, Any] = {}
    for method in STUDY_METHODS:
        mine = [r for r in records if r["method"] == method]
        deltas = [r["delta"] for r in mine]
        summary[method] = {
            "mean_delta": round(sum(deltas) / max(1, len(deltas)), 6),
            "deltas": deltas,
            "valid": sum(r["status"] == "ok" for r in mine),
            "runs": len(mine),
        }
    return summary


async def _ablation(ev: Evaluator, records: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    from reharness.engineer.paired import evaluate_patch
    from reharness.patches.model import Patch

    done = load_records(path)
    try:
        for record in records:
            if record["method"] != "grpo" or not record.get("patch"):
                continue
            patch = Patch.from_dict(record["patch"])
            base, packet = await ev.baseline(record["env"], "test", record["batch"])
            for point in sorted(patch.hooks):
                key = f"{record['env']}/{record['batch']}/-{point}"
                if key in done:
                    continue
                hooks = {k: v for k, v in patch.hooks.items() if k != point}
                ablated = Patch(hooks, patch.description, patch.env) if hooks else None
                result = await evaluate_patch(
                    ablated, base, ev.agent(record["env"]), ev.out / "runs", candidate_id=key,
                    invalid_reason="no hooks left", evidence=packet.leakage_evidence(),
                )  # fmt: skip
                flips = {t: 1.0 for t in result.rescued} | {t: 0.0 for t in result.broken}
                successes = [flips.get(e.task_id, float(e.success)) for e in base.episodes]
                done[key] = {"key": key, "env": record["env"], "point": point, "successes": successes}
                _append(path, done[key])
    finally:
        await ev.close()
    return list(done.values())


def ablation(
    config: R1Config,
    records: list[dict[str, Any]],
    agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
) -> dict[str, float]:
    """Success over all test tasks of the GRPO engineer's patches, full and with each hook removed."""
    from reharness.runtime.effects import HOOK_POINTS

    notify("ablation: GRPO patches without each hook position")
    ev = Evaluator(config, agents, notify)
    ablated = {r["key"]: r for r in asyncio.run(_ablation(ev, records, Path(config.out) / "ablation.jsonl"))}
    grpo = [r for r in records if r["method"] == "grpo"]
    total = max(1, sum(len(r["successes"]) for r in grpo))
    result = {"full": round(sum(sum(r["successes"]) for r in grpo) / total, 6)}
    for point in HOOK_POINTS:
        values = 0.0
        for r in grpo:
            found = ablated.get(f"{r['env']}/{r['batch']}/-{point}")
            values += sum(found["successes"] if found else r["successes"])
        result[f"without {point}"] = round(values / total, 6)
    none = [r for r in records if r["method"] == "none"]
    result["no patch"] = round(sum(sum(r["successes"]) for r in none) / total, 6)
    return result
