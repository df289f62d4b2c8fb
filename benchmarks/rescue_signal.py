"""Does rescue training have signal here? The diagnostic issue 22 asks for before any training run.

For a policy (default: the shipped tiny S agent), K rollouts per `train` task at the training
temperature under H0: the share of groups in which every rollout fails (the groups GRPO cannot learn
from), and for those the share that the router's sibling rescues (at least one of K fresh rollouts
succeeds, audit applied) and the share that *some* sibling rescues (oracle: every sibling tried). Also
the equal-compute control: K fresh H0 rollouts on the same all-failed groups. Uses the trainer's own
rollout engine and rescuer, so the figures are what `reharness train policy` sees at step 0.

    python benchmarks/rescue_signal.py --env household --pool docs/results/pool-household --tasks 24
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from reharness.envs.registry import make_env
from reharness.failures import failure_codes
from reharness.pool.pool import Pool, load_pool
from reharness.pool.profile import load_profile
from reharness.pool.router import Router
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.harness import Harness
from reharness.training.rescue import Group, Rescuer
from reharness.training.rollouts import RolloutEngine


async def main(args: argparse.Namespace) -> dict:
    agent = make_agent(args.agent.replace("{env}", args.env), max_batch_size=args.concurrency)
    engine = RolloutEngine(args.env, "train", agent, concurrency=args.concurrency, annotate=failure_codes)
    pool = load_pool(args.pool) if args.pool else None
    siblings = list(pool.siblings) if pool is not None else []
    router = Router(pool, load_profile(pool), top_k=1, seed=args.seed) if siblings else None
    import random

    env = make_env(args.env, split="train")
    tasks = random.Random(args.seed).sample(range(env.num_tasks()), args.tasks)
    env.close()
    started = time.perf_counter()
    from reharness.training.policy_grpo import reply_budget

    budget = reply_budget(getattr(agent, "model", None))
    common = dict(k=args.k, seed=args.seed, temperature=args.temperature, pool=pool, max_tokens=budget)
    mode = "router" if router else "none"
    base = Rescuer(engine, Harness.base(args.env), rescue=mode, router=router, **common)
    h0 = await base.h0_groups(0, tasks)
    failed_h0 = [g for g in h0 if g.all_failed_in_h0]
    report = await base.rescue_groups(0, h0)
    print(f"H0 groups done in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    h0_seconds = engine.stats.seconds.get("h0", 0.0)
    failed = [g for g in report.groups if g.all_failed_in_h0]
    out = {
        "env": args.env,
        "k": args.k,
        "temperature": args.temperature,
        "tasks": args.tasks,
        "h0_mean_success": report.summary()["h0_success"],
        "all_fail_groups": len(failed),
        "all_fail_share": len(failed) / len(report.groups),
        "router_rescued": sum((g.rescue is not None and g.rescue.successes > 0) for g in failed),
        "router_audit_lost": sum(g.rescue.audit_lost for g in failed if g.rescue is not None),
        "h0_episodes_per_s": round(engine.stats.episodes["h0"] / max(h0_seconds, 1e-9), 3),
    }
    print(json.dumps(out), file=sys.stderr, flush=True)  # the first figures, before the slower controls
    # equal-compute control and the oracle over every sibling, on the same all-failed H0 groups (reused,
    # not re-run: each control rescues fresh copies of them)

    def fresh() -> list[Group]:
        return [Group(g.task_index, g.base, g.base) for g in failed_h0]

    control = Rescuer(engine, Harness.base(args.env), rescue="resample", **common)
    resampled = await control.rescue_groups(0, fresh())
    out["resample_rescued"] = sum(g.rescue is not None and g.rescue.successes > 0 for g in resampled.groups)
    rescued_by_any: set[int] = set()
    per_sibling: dict[str, int] = {}
    for sibling in siblings:
        only = common | {"pool": _only(pool, sibling)}
        forced = Rescuer(engine, Harness.base(args.env), rescue="random", **only)
        rep = await forced.rescue_groups(0, fresh())
        wins = {g.task_index for g in rep.groups if g.rescue and g.rescue.successes > 0}
        per_sibling[sibling.name] = len(wins)
        rescued_by_any |= wins
        for harness in forced.harnesses()[1:]:  # this sibling's sandbox workers; the engine stays open
            for overlay in harness.overlays:
                await overlay.close()
    out["oracle_rescued"] = len(rescued_by_any)
    out["per_sibling_rescued"] = per_sibling
    out["router_rescue_share"] = out["router_rescued"] / len(failed) if failed else None
    out["oracle_rescue_share"] = len(rescued_by_any) / len(failed) if failed else None
    out["resample_rescue_share"] = out["resample_rescued"] / len(failed) if failed else None
    out["costs"] = engine.stats.as_dict()
    out["wall_seconds"] = round(time.perf_counter() - started, 1)
    await engine.close(base.harnesses())
    await agent.close()
    return out


def _only(pool: Pool, sibling: object) -> Pool:  # a one-sibling pool: "random" then always picks it
    return Pool(pool.env, pool.h0, [sibling], pool.policy, pool.directions)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", required=True)
    parser.add_argument("--agent", default="tiny:{env}-S")
    parser.add_argument("--pool", default=None)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=1))
