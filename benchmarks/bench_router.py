"""Benchmark: the router's decision cost, side by side in one run.

On a realistic pool (8 siblings over the 6 built-in directions, household H0) with a seeded synthetic
profile (every sibling × cluster and task-type cell filled), it routes real failed groups — K episodes of
the scripted ``random`` agent per task under H0 — and prints:

- µs per decision for the rule strategies (``validation``, ``profile``, ``random``, ``oracle``, ``vote`` with
  the two rule judges) and for ``rank1``, each over the same groups, next to the cost of building one
  group's features (``group_context``, part of every group decision);
- for ``vote`` with an LLM judge against the local OpenAI-compatible server (scripted replies, 127.0.0.1):
  model calls and tokens per decision and ms per decision;
- Rank-1's cost relative to the mean wall time of one of the episodes above (the random agent is the
  cheapest policy there is, so the ratio is an upper bound for real agents).

Run: ``python benchmarks/bench_router.py [--tasks 32] [--k 4] [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence

from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs.registry import make_env
from reharness.failures import failure_codes
from reharness.models.server import ChatServer, ServerThread
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
from reharness.pool.decision import group_context
from reharness.pool.judges import BehaviourJudge, DirectionJudge, LLMJudge
from reharness.pool.profile import OTHER, SOLVED, Profile, ProfileCell, pool_hash
from reharness.pool.router import Router
from reharness.runtime import EpisodeRunner, FunctionAgent, Harness, RandomAgent, base_harness_config
from reharness.store.records import EpisodeRecord

DELTAS = [
    ("snap", "action_validity", {"show_admissible": False}),
    ("loops", "loop_recovery", {"history_window": 4}),
    ("budget", "loop_recovery", {"step_limit": 60}),
    ("goal", "goal_tracking", {"history_window": 8}),
    ("errors", "error_feedback", {"history_window": 12}),
    ("memory", "state_memory", {"history_window": 2}),
    ("memory-long", "state_memory", {"history_window": 16, "step_limit": 60}),
    ("protocol", "tool_protocol", {"history_window": 6}),
]


def make_pool() -> Pool:
    h0 = base_harness_config("household")
    siblings = [
        Sibling(name=n, direction=d, base=h0, delta=delta, description=f"{n}") for n, d, delta in DELTAS
    ]
    return Pool("household", h0, siblings, PolicyRef(spec="random"), builtin_directions())


def synthetic_profile(pool: Pool, task_types: Sequence[str], seed: int = 0) -> Profile:
    rng = random.Random(seed)

    def cell(failures: int) -> ProfileCell:
        n = rng.randint(5, 40)
        fails = n if failures else rng.randint(0, n)
        return ProfileCell(
            attempts=n,
            h0_failures=fails,
            rescues=rng.randint(0, fails),
            successes=rng.randint(0, n),
            steps=n * 20,
            actions=n * 18,
            invalid_actions=rng.randint(0, n * 5),
            repeated_actions=rng.randint(0, n * 5),
            observed=n,
        )

    keys = [d.name for d in builtin_directions()] + [OTHER]
    profile = Profile(
        pool_hash=pool_hash(pool), policy=pool.policy, policy_hash="bench", split="valid", tasks=[]
    )
    for s in pool.siblings:
        profile.cells[s.id] = {k: cell(1) for k in keys} | {SOLVED: cell(0)}
        profile.by_task_type[s.id] = {t: cell(0) for t in task_types}
    profile.h0 = {t: cell(0) for t in task_types}
    return profile


async def failed_groups(tasks: int, k: int) -> tuple[list[list[EpisodeRecord]], float]:
    env = make_env("household", split="valid")
    harness = Harness.base("household")
    groups, spent, episodes = [], 0.0, 0
    for i in range(tasks):
        group = []
        for seed in range(k):
            start = time.perf_counter()
            record = await EpisodeRunner(env, RandomAgent(), harness).run(env.get_task(i), seed=seed)
            spent += time.perf_counter() - start
            episodes += 1
            record.failure_codes = failure_codes(record)
            group.append(record)
        if not any(r.success for r in group):
            groups.append(group)
    return groups, spent / episodes


async def per_decision(router: Router, groups: list[list[EpisodeRecord]], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for group in groups:
            await router.route(group)
    return (time.perf_counter() - start) / (repeat * len(groups)) * 1e6


async def main_async(args: argparse.Namespace) -> None:
    pool = make_pool()
    groups, episode_s = await failed_groups(args.tasks, args.k)
    types = sorted({g[0].task_type for g in groups})
    profile = synthetic_profile(pool, types)
    steps = sum(r.num_steps for g in groups for r in g) / sum(len(g) for g in groups)
    print(
        f"pool: {len(pool.siblings)} siblings over {len({s.direction for s in pool.siblings})} directions; "
        f"{len(groups)} all-failed groups of K={args.k} random-agent episodes ({steps:.0f} steps each)"
    )
    start = time.perf_counter()
    for _ in range(args.repeat):
        for group in groups:
            group_context(group, pool.directions)
    features_us = (time.perf_counter() - start) / (args.repeat * len(groups)) * 1e6
    print(f"group_context (features of one group, measured alone): {features_us:.0f} µs")
    print(f"{'strategy':<34}{'µs/decision':>14}")
    for strategy in ("validation", "profile", "random", "oracle"):
        us = await per_decision(Router(pool, profile, strategy), groups, args.repeat)
        print(f"{strategy:<34}{us:>14.0f}")
    rule = Router(pool, profile, "vote", judges=[DirectionJudge(), BehaviourJudge()])
    us = await per_decision(rule, groups, args.repeat)
    print(f"{'vote (2 rule judges)':<34}{us:>14.0f}")
    rank = Router(pool, profile)
    start = time.perf_counter()
    for _ in range(args.repeat):
        for group in groups:
            await rank.rank1(group[0])
    rank_us = (time.perf_counter() - start) / (args.repeat * len(groups)) * 1e6
    print(f"{'rank1 (no group: before acting)':<34}{rank_us:>14.0f}")
    print(
        f"rank1 vs one episode: {rank_us:.0f} µs / {episode_s * 1e3:.1f} ms = "
        f"{rank_us / (episode_s * 1e6):.2%} (random agent: the cheapest policy, so an upper bound)"
    )

    names = [s.name for s in pool.siblings]

    def reply(request: ChatRequest) -> ChatResponse:
        listed = [n for n in names if f"{n} (direction" in (request.messages[-1].content or "")]
        return ChatResponse(text=f"Answer: {listed[-1]}", prompt_token_ids=None, completion_token_ids=None)

    thread = ServerThread(ChatServer(FunctionAgent(reply), model_name="judge"))
    url = thread.start()
    try:
        llm = LLMJudge(f"llm:openai:judge@{url}", max_retries=0)
        router = Router(pool, profile, "vote", judges=[llm, DirectionJudge()])
        n = min(len(groups), 32)
        start = time.perf_counter()
        decisions = [await router.route(g) for g in groups[:n]]
        ms = (time.perf_counter() - start) / n * 1e3
        await router.close()
    finally:
        thread.stop()
    calls = sum(d.model_calls for d in decisions) / n
    tokens = sum(d.tokens for d in decisions) / n
    voted = sum(d.votes[0].vote is not None for d in decisions) / n
    print(
        f"vote (LLM judge + rule judge, local server): {calls:.2f} model calls/decision, {tokens:.0f} tokens/"
        f"decision (characters/4), {ms:.1f} ms/decision, LLM judge voted in {voted:.0%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=20)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
