"""What every built-in environment produces, hashed: the behaviour that moving environment knowledge into kits
must not change.

For each built-in and each of its shipped harnesses, a few test episodes of the scripted and random agents
(and the shipped tiny agent where one exists) are run through :func:`run_batch`; from them come the
trajectory digest, each episode's failure findings and runtime signals, the failure packet, the repair
operators' proposals (patch JSON and repair program) and a rerun with the first proposal installed. Tiny-agent
demonstrations and the Harness-R1 example patch cover the recipe, demo and ``ctx`` paths.

``python tests/kits/golden.py`` records ``golden_digests.json`` (done once, before the move);
``test_golden_digests.py`` recomputes and compares.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from reharness.core.hashing import stable_hash

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden_digests.json"
EXAMPLES = HERE.parents[1] / "examples" / "patches"
N = 3

#: (env, harness file stem or None for the base, agents)
CASES: list[tuple[str, str | None, tuple[str, ...]]] = [
    ("household", None, ("solver", "random", "tiny:household-S")),
    ("shop", None, ("solver", "random", "tiny:shop-S")),
    ("db", None, ("solver", "random", "tiny:db-S")),
    ("db", "db-fc", ("solver", "random")),
    ("code", None, ("solver", "random", "tiny:code-S")),
    ("code", "code-fc", ("random",)),
    ("apps", None, ("solver", "random", "tiny:apps-S")),
    ("apps", "apps-fc", ("random",)),
]


def _harness(env: str, stem: str | None) -> Any:
    from reharness.runtime.harness import Harness, base_harness_config

    return Harness(base_harness_config(env, None if stem is None else stem.split("-")[-1]))


async def _run(env: str, agent_spec: str, harness: Any, out: Path, overlays: tuple[Any, ...] = ()) -> Any:
    from reharness.failures import failure_codes
    from reharness.runtime.agent_specs import make_agent
    from reharness.runtime.executor import RunSpec, run_batch

    spec = RunSpec(env=env, agent=agent_spec, split="test", n=N, seed=0, concurrency=2)
    agent = make_agent(agent_spec)
    try:
        return await run_batch(
            spec, agent, harness.with_overlays(*overlays), out_dir=out, annotate=failure_codes
        )
    finally:
        for overlay in overlays:
            await overlay.close()
        await agent.close()


def _proposals(packet: Any) -> tuple[list[dict[str, Any]], Any]:
    from reharness.engineer.operators.engineer import OperatorEngineer

    proposals = asyncio.run(OperatorEngineer().propose(packet, 4, seed=0))
    rows = []
    for p in proposals:
        patch = getattr(p, "patch", None)
        rows.append(
            {
                "patch": stable_hash(patch.to_dict()) if patch is not None else None,
                "program": stable_hash(p.meta.get("program")),
                "operators": p.meta.get("operators"),
            }
        )
    first = next((getattr(p, "patch", None) for p in proposals if getattr(p, "patch", None)), None)
    return rows, first


def case_digests(env: str, stem: str | None, agents: tuple[str, ...]) -> dict[str, Any]:
    from reharness.failures.detectors import findings
    from reharness.failures.packets import extract_packet
    from reharness.failures.render import render_packet
    from reharness.failures.runtime_signals import signals
    from reharness.patches.overlay import PatchOverlay

    harness = _harness(env, stem)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for agent in agents:
            result = asyncio.run(_run(env, agent, harness, Path(tmp)))
            episodes = sorted(result.episodes, key=lambda e: e.episode_index)
            row: dict[str, Any] = {
                "digest": result.digest,
                "success": [e.success for e in episodes],
                "findings": [
                    [(f.code.value, list(f.steps), f.detail) for f in findings(e)] for e in episodes
                ],
                "signals": stable_hash([signals(e) for e in episodes]),
            }
            if any(not e.success or e.score < 1 for e in episodes):
                packet = extract_packet(episodes)
                row["packet"] = stable_hash(render_packet(packet))
                row["proposals"], first = _proposals(packet)
                if first is not None:
                    patched = asyncio.run(_run(env, agent, harness, Path(tmp), (PatchOverlay(first),)))
                    row["patched_digest"] = patched.digest
            out[agent] = row
    return out


def demo_digests(env: str) -> str:
    from reharness.models.tiny.config import recipe_for
    from reharness.training.tiny.demos import render_demos

    demos, stats = render_demos(env, 4, seed=0, perturb_prob=0.5, thoughts=True)
    recipe = recipe_for(env, "S")
    return stable_hash(
        {
            "demos": [(d.task_id, d.seed, d.as_dicts(), d.supervised, d.success) for d in demos],
            "stats": (stats.episodes, stats.successes, stats.turns, stats.supervised_turns, stats.extra),
            "recipe": recipe.model_dump(),
        }
    )


def r1_digest() -> str:
    from reharness.patches.model import load_patch
    from reharness.patches.overlay import PatchOverlay

    patch = load_patch(EXAMPLES / "household_nothing_happens_r1.json")
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(
            _run("household", "random", _harness("household", None), Path(tmp), (PatchOverlay(patch),))
        )
    return result.digest


def compute_all() -> dict[str, Any]:
    data: dict[str, Any] = {}
    for env, stem, agents in CASES:
        data[f"{env}/{stem or 'base'}"] = case_digests(env, stem, agents)
        print("done", env, stem, file=sys.stderr, flush=True)
    for env in ("household", "shop", "db", "code", "apps"):
        data[f"demos/{env}"] = demo_digests(env)
    data["r1/household"] = r1_digest()
    return data


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute_all(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("wrote", GOLDEN)
