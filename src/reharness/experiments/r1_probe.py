"""The hint-following probe of ``reharness experiment r1``: do the frozen target agents read hints at all?

The hook ablation finds that only ``before_action`` matters for the tiny agents, while Harness-R1 finds that
post-feedback hooks (hints) matter too. A hint can only help an agent that follows it. The probe patch
(:data:`PROBE_HOOK`) names, before every decision after the first, one admissible action chosen by the step
number ("Your next action must be exactly: X") — a hint any agent that reads its prompt can follow, whatever
the task. It is measured on each test batch like any patch (paired rerun, same tasks and seeds), and the
episodes say how often the agent then took exactly the named action (``followed_frac``), against how often
the unpatched agent took that action at the same step of the same episode (``baseline_frac``, a chance
reference: the two runs share their start up to the first hint). Environments that list no admissible actions
(free-form SQL) get no hint and report ``hinted_steps`` 0. Records are appended to ``OUT/hint_probe.jsonl``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.experiments.r1_eval import Evaluator, load_records, record_units
from reharness.patches.model import Patch

if TYPE_CHECKING:
    from reharness.experiments.r1_stages import R1Config
    from reharness.runtime.agents import Agent

MARK = "Your next action must be exactly: "
PROBE_HOOK = """def hook(ctx, nb):
    options = sorted(str(o) for o in (ctx.get("admissible") or []))
    step = int(ctx.get("step") or 0)
    if step == 0 or not options:
        return None
    return {"message": "<<mark>>" + options[(7 * step) % len(options)]}
""".replace("<<mark>>", MARK)


def probe_patch(env: str) -> Patch:
    return Patch({"before_decision": PROBE_HOOK}, "[hint probe] Name one admissible action.", env)


def following(patched: list[Any], baseline: list[Any]) -> dict[str, int]:
    """Hinted steps, those where the agent took the named action, and those where the unpatched agent took
    it at the same step of the same episode."""
    hinted = followed = same = 0
    for episode, base in zip(patched, baseline, strict=True):
        for index, step in enumerate(episode.steps):
            named = [e["text"][len(MARK) :] for e in step.effects if str(e.get("text", "")).startswith(MARK)]
            if not named:
                continue
            hinted += 1
            followed += int(step.action == named[0])
            same += int(index < len(base.steps) and base.steps[index].action == named[0])
    return {"hinted_steps": hinted, "followed": followed, "baseline_same": same}


async def _probe(ev: Evaluator, path: Path) -> list[dict[str, Any]]:
    from reharness.measure.paired import evaluate_patch
    from reharness.store.run_store import RunStore

    done = load_records(path)
    units = [
        (env, i) for env in ev.config.envs for i in range(ev.config.test_batches) if f"{env}/{i}" not in done
    ]

    async def one(env: str, index: int) -> list[dict[str, Any]]:
        base, packet = await ev.baseline(env, "test", index)
        result = await evaluate_patch(
            probe_patch(env), base, ev.agent(env), ev.out / "runs", candidate_id="hint-probe",
            evidence=packet.leakage_evidence(), score_degenerate=True,
        )  # fmt: skip
        episodes = RunStore(result.run_dir).episodes() if result.run_dir else []
        counts = following(episodes, base.episodes) if episodes else following([], [])
        return [{"key": f"{env}/{index}", "env": env, "batch": index, "status": result.status, **counts}]

    try:
        await record_units(units, ev.config.batch_concurrency, lambda u: one(*u), done, path)
    finally:
        await ev.close()
    return list(done.values())


def hint_probe(
    config: R1Config,
    agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
) -> dict[str, dict[str, Any]]:
    """Per environment: hinted steps, how often the target followed the hint, and the chance reference."""
    notify("hint probe: does the target follow a hint naming its next action?")
    ev = Evaluator(config, agents, notify)
    records = asyncio.run(_probe(ev, Path(config.out) / "hint_probe.jsonl"))
    out = {}
    for env in config.envs:
        mine = [r for r in records if r["env"] == env]
        hinted = sum(r["hinted_steps"] for r in mine)
        out[env] = {
            "hinted_steps": hinted,
            "followed_frac": round(sum(r["followed"] for r in mine) / hinted, 4) if hinted else None,
            "baseline_frac": round(sum(r["baseline_same"] for r in mine) / hinted, 4) if hinted else None,
        }
    return out
