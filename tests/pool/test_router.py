"""The router: each strategy's exact choices on constructed profiles, determinism, Rank-1, the log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pool_fixtures import BEHAVIOUR, cell, failed_record, h0_config, profile_of, run_episodes, small_pool

from reharness.core.errors import ConfigError, DataError, UnknownNameError
from reharness.envs.registry import make_env
from reharness.pool import PolicyRef, Pool
from reharness.pool.decision import group_context, read_log
from reharness.pool.judges import BehaviourJudge, DirectionJudge
from reharness.pool.profile import ProfileCell, measure_profile
from reharness.pool.router import Router
from reharness.runtime import SolverAgent


@pytest.fixture
def pool() -> Pool:
    return small_pool()


def names(pool: Pool, ids: list[str]) -> list[str]:
    return [pool.get(i).name for i in ids]


def route(router: Router, *groups) -> list:  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        return [await router.route(g) for g in groups]

    return asyncio.run(go())


VALIDATION = {
    "long-budget": {"loop_recovery": cell(10, 6), "action_validity": cell(10, 1)},
    "short-budget": {"loop_recovery": cell(10, 3), "state_memory": cell(10, 5)},
    "no-listing": {"action_validity": cell(10, 8), "loop_recovery": cell(2, 0)},
}


def test_validation_strategy_ranks_by_the_cluster_mix(pool: Pool) -> None:
    router = Router(pool, profile_of(pool, VALIDATION), top_k=2)
    loop, invalid, mixed = route(
        router,
        [failed_record(["repeated_action"])] * 2,
        [failed_record(["invalid_action"], task="t2")],
        [failed_record(["invalid_action"], task="t3"), failed_record(["repeated_action"], task="t3")],
    )
    assert loop.cluster_mix == {"loop_recovery": 1.0} and loop.failure_codes == {"repeated_action": 2}
    assert names(pool, loop.choice) == ["long-budget", "short-budget"]
    assert [c.score for c in loop.candidates] == [0.6, 0.3, 0.0]
    assert names(pool, invalid.choice) == ["no-listing", "long-budget"]
    # 0.5 x action_validity + 0.5 x loop_recovery: no-listing 0.40, long-budget 0.35, short-budget 0.15
    assert mixed.cluster_mix == {"action_validity": 0.5, "loop_recovery": 0.5}
    assert [(c.name, c.score) for c in mixed.candidates] == [
        ("no-listing", 0.4),
        ("long-budget", 0.35),
        ("short-budget", 0.15),
    ]
    # a failure in two clusters (step_limit: loop_recovery and state_memory) splits its weight
    step = route(router, [failed_record(["step_limit"], task="t4")])[0]
    assert step.cluster_mix == {"loop_recovery": 0.5, "state_memory": 0.5}
    assert names(pool, step.choice) == ["short-budget", "long-budget"]  # 0.40 vs 0.30


THIN = {
    "long-budget": {"loop_recovery": cell(100, 30)},
    "no-listing": {"loop_recovery": cell(4, 1)},
}


def test_profile_strategy_adds_exploration_and_task_type(pool: Pool) -> None:
    group = [failed_record(["repeated_action"], task_type="pick")]
    explore = route(Router(pool, profile_of(pool, THIN), "profile"), group)[0]
    # long 0.30 + 0.25/sqrt(101); no-listing 0.25 + 0.25/sqrt(5); short-budget (no evidence) 0 + 0.25
    assert names(pool, explore.choice) == ["no-listing", "long-budget", "short-budget"]
    assert explore.candidates[0].score == pytest.approx(0.25 + 0.25 / 5**0.5, abs=1e-6)
    greedy = route(Router(pool, profile_of(pool, THIN), "profile", explore=0.0), group)[0]
    assert names(pool, greedy.choice) == ["long-budget", "no-listing", "short-budget"]
    short = pool.get("short-budget").id
    typed = profile_of(pool, THIN, by_task_type={short: {"pick": cell(10, 9)}})
    assert names(pool, route(Router(pool, typed, "profile"), group)[0].choice)[0] == "short-budget"
    # validation reads neither the task type nor the exploration bonus
    assert names(pool, route(Router(pool, typed), group)[0].choice) == [
        "long-budget",
        "no-listing",
        "short-budget",
    ]


def test_learned_outcomes_move_profile_but_not_validation(pool: Pool) -> None:
    profile = profile_of(pool, THIN)
    router = Router(pool, profile, "profile", explore=0.0)
    validation = Router(pool, profile)
    group = [failed_record(["repeated_action"])]
    decision = route(router, group)[0]
    short = pool.get("short-budget").id
    for _ in range(5):
        router.record_outcome(decision, short, successes=4, attempts=4)
    assert profile.cell(short, "loop_recovery").rescues == 20
    assert names(pool, route(router, group)[0].choice)[0] == "short-budget"
    assert names(pool, route(validation, group)[0].choice)[0] == "long-budget"
    assert decision.outcome[0].successes == 4 and len(decision.outcome) == 5
    with pytest.raises(ConfigError, match="successes"):
        router.record_outcome(decision, short, successes=5, attempts=4)


@pytest.mark.parametrize(
    ("judges", "aggregation", "expected"),
    [
        ([DirectionJudge()], "majority", ["no-listing", "long-budget", "short-budget"]),
        ([BehaviourJudge()], "majority", ["short-budget", "long-budget", "no-listing"]),
        # one vote each for no-listing and short-budget: the profile order breaks the tie
        ([DirectionJudge(), BehaviourJudge()], "majority", ["no-listing", "short-budget", "long-budget"]),
        # Borda: direction [no-listing, long, short], behaviour [short, no-listing, long] -> 3, 2, 1
        ([DirectionJudge(), BehaviourJudge()], "borda", ["no-listing", "short-budget", "long-budget"]),
    ],
)
def test_vote_strategy(pool: Pool, judges, aggregation: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    router = Router(
        pool, profile_of(pool, BEHAVIOUR), "vote", judges=judges, aggregation=aggregation, explore=0
    )
    decision = route(router, [failed_record(["invalid_action"], steps=4)] * 2)[0]
    assert [c.name for c in decision.candidates] == ["long-budget", "no-listing", "short-budget"]
    assert names(pool, decision.choice) == expected
    assert [v.judge for v in decision.votes] == [j.name for j in judges]
    assert all(v.reason for v in decision.votes) and decision.model_calls == 0


def test_judges_abstain_without_evidence(pool: Pool) -> None:
    router = Router(
        pool, profile_of(pool, {}), "vote", judges=[DirectionJudge(), BehaviourJudge()], explore=0
    )
    clean = failed_record(["wrong_answer"], steps=2).model_copy(update={"steps": []})
    decision = route(router, [clean])[0]
    assert [v.vote for v in decision.votes] == [None, None]  # no goal_tracking sibling; no behaviour seen
    assert names(pool, decision.choice) == ["long-budget", "short-budget", "no-listing"]  # pool order


def test_random_and_oracle(pool: Pool) -> None:
    groups = [[failed_record(["repeated_action"], task=f"t{i}")] for i in range(20)]
    profile = profile_of(pool, VALIDATION)
    a = route(Router(pool, profile, "random", top_k=2, seed=1), *groups)
    b = route(Router(pool, profile, "random", top_k=2, seed=1), *groups)
    c = route(Router(pool, profile, "random", top_k=2, seed=2), *groups)
    assert [d.choice for d in a] == [d.choice for d in b]
    assert [d.choice for d in a] != [d.choice for d in c]
    assert all(len(set(d.choice)) == 2 for d in a)
    assert len({tuple(d.choice) for d in a}) > 2  # it really varies across tasks
    oracle = route(Router(pool, profile, "oracle", top_k=1), groups[0])[0]
    assert oracle.choice == [s.id for s in pool.siblings]


@pytest.mark.parametrize("strategy", ["validation", "profile", "vote", "random", "oracle"])
def test_decisions_are_deterministic(pool: Pool, strategy: str) -> None:
    groups = [
        [failed_record([code], task=f"t{i}")] for i, code in enumerate(["invalid_action", "step_limit"] * 3)
    ]
    judges = [DirectionJudge(), BehaviourJudge()] if strategy == "vote" else []
    first = route(Router(pool, profile_of(pool, BEHAVIOUR), strategy, judges=judges, seed=5), *groups)
    again = route(Router(pool, profile_of(pool, BEHAVIOUR), strategy, judges=judges, seed=5), *groups)
    assert [d.model_dump() for d in first] == [d.model_dump() for d in again]


def test_rank1_picks_a_sibling_only_where_it_beats_h0(pool: Pool) -> None:
    env = make_env("household", split="valid")
    task = env.get_task(0)
    other = next(env.get_task(i) for i in range(1, 20) if env.get_task(i).task_type != task.task_type)
    long_id, short_id = pool.get("long-budget").id, pool.get("short-budget").id
    kind = task.task_type
    profile = profile_of(
        pool,
        {},
        h0={kind: ProfileCell(attempts=10, h0_failures=5, successes=5)},
        by_task_type={
            long_id: {kind: ProfileCell(attempts=10, h0_failures=5, rescues=3, breaks=1, successes=7)},
            short_id: {
                kind: ProfileCell(attempts=10, h0_failures=5, rescues=1, breaks=3, successes=3),
                other.task_type: ProfileCell(attempts=4, h0_failures=0, breaks=1, successes=3),
            },
        },
    )

    async def go(router: Router, t):  # type: ignore[no-untyped-def]
        return await router.rank1(t)

    router = Router(pool, profile)
    picked = asyncio.run(go(router, task))
    assert picked.kind == "rank1" and picked.choice == [long_id]
    assert picked.candidates[0].score == pytest.approx(0.2) and "vs H0 0.500" in picked.candidates[0].reason
    # no evidence on this type: the sibling's pool-wide gain (+0.2) decides, through the prior
    assert asyncio.run(go(router, other)).choice == [long_id]
    assert asyncio.run(go(Router(pool, profile, rank1_prior=0), other)).choice == []  # no prior: run H0
    assert asyncio.run(go(Router(pool, profile, min_gain=0.25), task)).choice == []
    for _ in range(20):  # outcomes learned on H0-failed groups do not count as evidence against H0
        profile.update(short_id, ["loop_recovery"], kind, rescued=True, broke=False)
    assert asyncio.run(go(router, task)).choice == [long_id]
    voted = asyncio.run(go(Router(pool, profile, "vote", judges=[DirectionJudge()]), task))
    assert voted.choice == [long_id] and voted.votes[0].vote is None  # no failure codes before acting


def test_rank1_shrinks_thin_type_evidence_toward_the_pool_wide_gain(pool: Pool) -> None:
    env = make_env("household", split="valid")
    task = env.get_task(0)
    other = next(env.get_task(i) for i in range(1, 20) if env.get_task(i).task_type != task.task_type)
    sid = pool.get("long-budget").id
    good = ProfileCell(attempts=30, h0_failures=20, rescues=9, breaks=0, successes=19)

    def pick(bad: ProfileCell, prior: float = 10.0) -> list[str]:
        profile = profile_of(pool, {}, by_task_type={sid: {task.task_type: good, other.task_type: bad}})
        return asyncio.run(Router(pool, profile, rank1_prior=prior).rank1(other)).choice

    thin = ProfileCell(attempts=2, h0_failures=0, breaks=1, successes=1)  # one break in two tasks: noise
    assert pick(thin) == [sid]
    assert pick(thin, prior=0) == []  # the raw per-type gain (-0.5) sends the type to H0
    many = ProfileCell(attempts=40, h0_failures=0, breaks=8, successes=32)  # a type it reliably hurts
    assert pick(many) == []
    with pytest.raises(ConfigError, match="rank1_prior"):
        Router(pool, profile_of(pool, {}), rank1_prior=-1)


def test_rank1_breaks_a_tie_toward_the_sibling_that_breaks_less(pool: Pool) -> None:
    task = make_env("household", split="valid").get_task(0)
    first, second = pool.siblings[0].id, pool.siblings[1].id
    risky = ProfileCell(attempts=40, h0_failures=30, rescues=2, breaks=1, successes=11)  # net +1
    quiet = ProfileCell(attempts=40, h0_failures=30, rescues=1, breaks=0, successes=11)  # net +1

    def pick(cells: dict[str, ProfileCell]) -> list[str]:
        by_type = {sid: {task.task_type: c} for sid, c in cells.items()}
        return asyncio.run(Router(pool, profile_of(pool, {}, by_task_type=by_type)).rank1(task)).choice

    assert pick({first: risky, second: quiet}) == [second]  # equal net gain, fewer breaks
    assert pick({first: quiet, second: risky}) == [first]
    assert pick({first: quiet, second: quiet}) == [first]  # still tied: pool order


def test_decision_log_parses_and_records_outcomes(pool: Pool, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "decisions.jsonl"
    router = Router(pool, profile_of(pool, VALIDATION), "vote", judges=[DirectionJudge()], log=log)
    decisions = route(router, *[[failed_record(["invalid_action"], task=f"t{i}")] for i in range(3)])
    router.record_outcome(decisions[0], decisions[0].choice[0], successes=1, attempts=4)
    router.record_outcome(decisions[2], decisions[2].choice[1], successes=0, attempts=4)
    lines = log.read_text().splitlines()
    assert len(lines) == 5 and [json.loads(line)["type"] for line in lines].count("outcome") == 2
    read = read_log(log)
    assert [d.decision_id for d in read] == [d.decision_id for d in decisions]
    assert read[0].outcome[0].successes == 1 and read[1].outcome == [] and read[2].outcome[0].attempts == 4
    assert read[0].votes[0].judge == "direction" and read[0].choice == decisions[0].choice
    asyncio.run(router.close())
    with log.open("a") as f:  # a write torn by an interruption
        f.write('{"type": "decision", "decision_id": "x", "en')
    assert len(read_log(log)) == 3
    log.write_text(lines[0] + "\nnot json\n" + lines[1] + "\n")
    with pytest.raises(DataError, match=r"decisions\.jsonl:2"):
        read_log(log)
    with pytest.raises(DataError, match="does not exist"):
        read_log(tmp_path / "none.jsonl")


def test_router_refuses_bad_setups(pool: Pool) -> None:
    profile = profile_of(pool, {})
    with pytest.raises(UnknownNameError, match="validation"):
        Router(pool, profile, "validaton")
    with pytest.raises(ConfigError, match="judge"):
        Router(pool, profile, "vote")
    with pytest.raises(ConfigError, match="another pool"):
        Router(small_pool(extra=[("w", "state_memory", {"history_window": 2})]), profile)
    with pytest.raises(DataError, match="one task"):
        group_context([failed_record(["x"], task="a"), failed_record(["x"], task="b")], pool.directions)


def test_routing_real_failed_groups(pool: Pool) -> None:
    """End to end on real episodes: H0's step_limit failures go to the sibling that measured best on them."""
    h0 = run_episodes(h0_config(), SolverAgent())
    sib = {s.id: run_episodes(s.config, SolverAgent()) for s in pool.siblings}
    profile = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    failed = [r for r in h0 if not r.success]
    decisions = route(Router(pool, profile, top_k=1), *[[r] for r in failed])
    assert decisions and all(names(pool, d.choice) == ["long-budget"] for d in decisions)
    assert all(d.features.mean_steps == 6 and d.features.action_kind for d in decisions)


def test_features_of_a_group() -> None:
    from reharness.store.records import PolicyOutput

    a = failed_record(["invalid_action"], steps=4)
    a.steps[0].output = PolicyOutput(text="Action: go to cabinet 0", logprobs=[-1.0, -3.0])
    a.steps[1].output = PolicyOutput(text="Action: go to cabinet 1", logprobs=[-2.0])
    b = failed_record(["invalid_action"], steps=2)
    features = group_context([a, b], small_pool().directions).features
    assert features.confidence == pytest.approx(-2.0)
    assert features.error_types == {"invalid_action": 6} and features.mean_steps == 3
    assert features.action_kind == "go" and features.repeated_observations == 3 + 1
    assert group_context([b], small_pool().directions).features.confidence is None


def test_every_strategy_is_one_registered_class() -> None:
    from reharness.core.errors import UnknownNameError
    from reharness.pool.decision import STRATEGIES as NAMES
    from reharness.pool.strategies import STRATEGIES, make_strategy

    assert STRATEGIES.names() == NAMES
    assert all(make_strategy(name).name == name for name in NAMES)
    with pytest.raises(UnknownNameError, match="did you mean 'profile'"):
        make_strategy("profil")
