"""Benchmark: model calls and wall time that prefix reuse saves in paired reruns of real patches.

For every example patch of ``examples/patches`` whose environment is in ``--envs``, on the same baseline
batch (``--episodes`` tasks of the ``test`` split, step limit ``--max-steps``), it runs the paired rerun
twice — with prefix reuse (the baseline's recorded outputs are replayed until the episode's context first
differs) and without — and prints side by side: model calls made, calls replayed, wall seconds, and whether
both runs gave the same Δ_B and the same trajectories.

The agent is ``--agent`` (a spec such as ``tiny:household-S`` or ``hf:PATH``; ``{env}`` in it is replaced by
the environment, e.g. ``tiny:{env}-S``); by default the built-in tiny agent of each environment when it is
installed, else the random tiny test model of ``tests/models/tiny_model.py`` (noise replies, bounded by
``--max-tokens``: the numbers then measure how early the patches fire, not an agent). Sampling is greedy and
``max_batch_size=1``, so the rerun without reuse is bit-exact and the comparison is fair. The two arms run
side by side on equal terms: the backend's key/value prefix cache is emptied before each arm (neither arm
starts on the other's warm cache), and the order alternates from patch to patch (reuse first, then plain
first), so warm-up and machine load fall on both arms alike; the order each patch ran in is printed.

Run: ``python benchmarks/bench_prefix_reuse.py [--episodes 8] [--envs household,shop,db] [--agent SPEC]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from reharness.core.errors import ConfigError
from reharness.core.types import SamplingParams
from reharness.measure.baseline import Target, get_baseline
from reharness.measure.paired import evaluate_patch
from reharness.models.registry import make_backend, resolve_tiny
from reharness.patches import load_patch
from reharness.runtime import RunSpec, base_harness_config
from reharness.runtime.agents import Agent
from reharness.store.records import trajectory_digest
from reharness.store.run_store import RunStore

ROOT = Path(__file__).resolve().parents[1]


def agent_spec(template: str | None, env: str, workdir: Path) -> str:
    if template:
        return template.replace("{env}", env)
    try:
        resolve_tiny(f"{env}-S")
        return f"tiny:{env}-S"
    except ConfigError:
        sys.path.insert(0, str(ROOT / "tests" / "models"))
        from tiny_model import build_tiny_model

        model_dir = workdir / "tiny-test-model"
        if not (model_dir / "config.json").is_file():
            build_tiny_model(model_dir)
        return f"hf:{model_dir}"


def example_patches(envs: list[str]) -> list[tuple[str, Path]]:
    found = []
    for path in sorted((ROOT / "examples" / "patches").glob("*")):
        if path.suffix not in (".json", ".yaml", ".yml"):
            continue
        try:
            patch = load_patch(path)
        except Exception:  # README and invalid-on-purpose files are skipped
            continue
        if patch.env in envs and path.stem != "invalid_match_escape":
            found.append((patch.env or "", path))
    return found


def cold_cache(agent: Agent) -> None:
    """Empty the hf backend's key/value prefix cache (a no-op for backends that keep none)."""
    prefix = getattr(getattr(agent, "reader", None), "prefix", None)
    if prefix is not None:
        prefix.clear()


async def bench_env(env: str, paths: list[Path], agent: Agent, args: argparse.Namespace, out: Path) -> None:
    config = base_harness_config(env).model_copy(
        update={"step_limit": args.max_steps, "sampling": SamplingParams(max_tokens=args.max_tokens)}
    )
    spec = RunSpec(
        env=env, agent=agent.policy_id, split="test", n=args.episodes, seed=args.seed, concurrency=8
    )
    started = time.perf_counter()
    baseline = await get_baseline(spec, agent, Target(config), out / env)
    base_s = time.perf_counter() - started
    calls, rate = baseline.cost.model_calls, baseline.result.success_rate
    print(f"\n{env}: baseline {spec.n} episodes, {calls} model calls, {base_s:.1f} s, success {rate:.0%}")
    head = f"{'patch':34} {'calls reuse':>11} {'replayed':>8} {'calls plain':>11} {'saved':>6} "
    print(head + f"{'s reuse':>8} {'s plain':>8} {'Δ_B':>7} {'same':>5} {'order':>12}")
    for k, path in enumerate(paths):
        patch = load_patch(path)
        runs = {}
        order = ("reuse", "plain") if k % 2 == 0 else ("plain", "reuse")
        for mode in order:
            cold_cache(agent)
            t0 = time.perf_counter()
            result = await evaluate_patch(
                patch, baseline, agent, out / env / mode, prefix_reuse=mode == "reuse"
            )
            runs[mode] = (result, time.perf_counter() - t0)
        (r, r_s), (p, p_s) = runs["reuse"], runs["plain"]
        same = r.delta == p.delta and trajectory_digest(RunStore(r.run_dir or "").episodes()) == (
            trajectory_digest(RunStore(p.run_dir or "").episodes())
        )
        saved = 1 - r.cost.model_calls / max(1, p.cost.model_calls)
        print(
            f"{path.name[:34]:34} {r.cost.model_calls:>11} {r.cost.reused_calls:>8} {p.cost.model_calls:>11} "
            f"{saved:>6.0%} {r_s:>8.1f} {p_s:>8.1f} {r.delta:>+7.3f} {str(same):>5} {'>'.join(order):>12}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--envs", default="household,shop,db")
    parser.add_argument("--agent", default=None, help="agent spec; {env} is replaced by the environment")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    envs = [e.strip() for e in args.envs.split(",") if e.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for env in envs:
            paths = [p for e, p in example_patches(envs) if e == env]
            if not paths:
                continue
            agent = make_backend(agent_spec(args.agent, env, out), max_batch_size=1)
            try:
                await bench_env(env, paths, agent, args, out)
            finally:
                await agent.close()


if __name__ == "__main__":
    asyncio.run(main())
