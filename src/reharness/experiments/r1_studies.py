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

Each study appends its records to a JSON-lines file as they finish and resumes from it. Like the main
evaluation, a study measures the patches of one unit (a seed, a GRPO patch's variants) together and runs
``batch_concurrency`` units at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.experiments.r1_stages import (
    Evaluator,
    R1Config,
    R1Row,
    aggregate,
    load_records,
    patched_successes,
    record_units,
)

if TYPE_CHECKING:
    from reharness.runtime.agents import Agent

STUDY_METHODS: tuple[str, ...] = ("operators", "sft", "grpo")


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
    from reharness.measure.paired import Candidate, evaluate_candidates

    done = load_records(path)
    units = [
        (env, s)
        for env in ev.config.envs
        for s in range(seeds)
        if any(f"{env}/{s}/{m}" not in done for m in STUDY_METHODS)
    ]

    async def unit(env: str, s: int) -> list[dict[str, Any]]:
        """One seed: its source packet, every method's patch, all measured together on the held-out batch."""
        _, packet = await ev.baseline(env, "heldout-source", s, n=max(2 * failures, 20), max_traces=failures)
        base, _ = await ev.baseline(env, "heldout-target", s, n=heldout_n)
        methods = [m for m in STUDY_METHODS if f"{env}/{s}/{m}" not in done]
        ev.notify(f"generalisation: {env} seed {s} ({', '.join(methods)})")
        proposals = await asyncio.gather(*(ev.propose(m, packet, base.spec.seed) for m in methods))
        candidates = [Candidate.of(f"{env}/{s}/{m}", p) for m, p in zip(methods, proposals, strict=True)]
        results = await evaluate_candidates(
            candidates, base, ev.agent(env), ev.out / "runs", evidence=packet.leakage_evidence()
        )
        return [
            {
                "key": f"{env}/{s}/{method}",
                "env": env,
                "seed": s,
                "method": method,
                "status": result.status,
                "source_failures": packet.header.failures_included,
                "n": result.n,
                "baseline_success": result.baseline_success,
                "patched_success": result.patched_success,
                "delta": result.success_delta,
                "ci_low": result.success_ci_low,
                "ci_high": result.success_ci_high,
                "broken": len(result.broken),
            }  # fmt: skip
            for method, result in zip(methods, results, strict=True)
        ]

    try:
        await record_units(units, ev.config.batch_concurrency, lambda u: unit(*u), done, path)
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
    from reharness.measure.paired import Candidate, evaluate_candidates
    from reharness.patches.model import Patch

    done = load_records(path)

    def key(record: dict[str, Any], point: str) -> str:
        return f"{record['env']}/{record['batch']}/-{point}"

    patched = [
        (record, Patch.from_dict(record["patch"]))
        for record in records
        if record["method"] == "grpo" and record.get("patch")
    ]
    todo = [(r, p) for r, p in patched if any(key(r, point) not in done for point in p.hooks)]

    async def one(record: dict[str, Any], patch: Patch) -> list[dict[str, Any]]:
        """One GRPO patch with each of its hook positions removed, the variants measured together."""
        base, packet = await ev.baseline(record["env"], "test", record["batch"])
        points = [point for point in sorted(patch.hooks) if key(record, point) not in done]
        candidates = []
        for point in points:
            hooks = {k: v for k, v in patch.hooks.items() if k != point}
            ablated = Patch(hooks, patch.description, patch.env) if hooks else None
            candidates.append(Candidate(key(record, point), ablated, None if hooks else "no hooks left"))
        results = await evaluate_candidates(
            candidates, base, ev.agent(record["env"]), ev.out / "runs", evidence=packet.leakage_evidence()
        )
        return [
            {
                "key": key(record, point),
                "env": record["env"],
                "point": point,
                "successes": patched_successes(base, result.rescued, result.broken),
            }
            for point, result in zip(points, results, strict=True)
        ]

    try:
        await record_units(todo, ev.config.batch_concurrency, lambda item: one(*item), done, path)
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
