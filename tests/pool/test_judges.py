"""LLM judges end to end: the router's ``vote`` strategy against the local OpenAI-compatible test server
(127.0.0.1) with scripted replies — a valid vote, a vote for a non-candidate, malformed replies and server
errors. A judge abstains instead of failing, and the router falls back to the profile's order."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator

import pytest
from pool_fixtures import BEHAVIOUR, failed_record, profile_of, small_pool

from reharness.core.errors import UnknownNameError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.models.server import ChatServer, Fault, ServerThread
from reharness.pool import Pool
from reharness.pool.decision import RouteDecision
from reharness.pool.judges import DirectionJudge, LLMJudge, make_judge, parse_choice
from reharness.pool.profile import ProfileCell
from reharness.pool.router import Router
from reharness.runtime import FunctionAgent

PROMPT_TOKENS = 40


class Scripted:
    """The served model: answers each request with the next scripted reply and keeps the requests."""

    def __init__(self) -> None:
        self.replies: deque[str] = deque()
        self.requests: list[ChatRequest] = []

    def __call__(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        text = self.replies.popleft() if self.replies else ""
        return ChatResponse(
            text=text,
            prompt_token_ids=tuple(range(PROMPT_TOKENS)),
            completion_token_ids=tuple(range(len(text.split()))),
        )


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[ChatServer, Scripted]]:
    script = Scripted()
    thread = ServerThread(ChatServer(FunctionAgent(script), model_name="judge"))
    thread.start()
    yield thread.server, script
    thread.stop()


@pytest.fixture
def server(served: tuple[ChatServer, Scripted]) -> tuple[ChatServer, Scripted]:
    server, script = served
    server.faults.clear()
    script.replies.clear()
    script.requests.clear()
    return server, script


def judge(server: ChatServer, seed: int = 0) -> LLMJudge:
    made = make_judge(f"llm:openai:judge@{server.base_url}", seed=seed, max_retries=0, timeout_s=5.0)
    assert isinstance(made, LLMJudge)
    return made


def vote(pool: Pool, judges: list, seed: int = 0) -> RouteDecision:  # type: ignore[type-arg]
    router = Router(pool, profile_of(pool, BEHAVIOUR), "vote", judges=judges, explore=0.0, seed=seed)

    async def go() -> RouteDecision:
        try:
            return await router.route([failed_record(["invalid_action"], steps=4)] * 2)
        finally:
            await router.close()

    return asyncio.run(go())


PROFILE_ORDER = ["long-budget", "no-listing", "short-budget"]


def names(pool: Pool, ids: list[str]) -> list[str]:
    return [pool.get(i).name for i in ids]


def test_a_valid_vote_wins(server: tuple[ChatServer, Scripted]) -> None:
    srv, script = server
    pool = small_pool()
    script.replies.append("The agent keeps issuing rejected commands.\nAnswer: short-budget")
    decision = vote(pool, [judge(srv)])
    assert names(pool, decision.choice) == ["short-budget", "long-budget", "no-listing"]
    (cast,) = decision.votes
    assert (
        cast.vote == pool.get("short-budget").id
        and cast.error is None
        and "named short-budget" in cast.reason
    )
    assert decision.model_calls == 1 and decision.tokens == PROMPT_TOKENS + 8  # the reply is 8 words
    # the prompt shows the failure summary and the k candidates' descriptions and profile rows
    prompt = script.requests[0].messages[-1].content
    assert "invalid_action x2" in prompt and "action_validity 100%" in prompt
    for name in PROFILE_ORDER:
        assert f"{name} (direction" in prompt and f"{name} along" in prompt
    assert "rescued 3/10 of this cluster mix" in prompt and "invalid-action rate 0.05" in prompt


def test_judge_requests_are_seeded(server: tuple[ChatServer, Scripted]) -> None:
    srv, script = server
    pool = small_pool()
    script.replies.extend(["Answer: no-listing"] * 3)
    vote(pool, [judge(srv, seed=1)])
    vote(pool, [judge(srv, seed=1)])
    vote(pool, [judge(srv, seed=2)])
    seeds = [r.seed for r in script.requests]
    assert seeds[0] == seeds[1] != seeds[2] and seeds[0] is not None


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("Answer: teleport-harness", "names no candidate"),  # a vote for a non-candidate
        ("¯\\_(ツ)_/¯ {{{", "names no candidate"),  # malformed
        ("", "empty reply"),
        ("Either long-budget or short-budget would do.", "several candidates"),
    ],
)
def test_replies_naming_no_single_candidate_abstain(
    server: tuple[ChatServer, Scripted], reply: str, why: str
) -> None:
    srv, script = server
    pool = small_pool()
    script.replies.append(reply)
    decision = vote(pool, [judge(srv)])
    assert decision.votes[0].vote is None and why in decision.votes[0].reason
    assert names(pool, decision.choice) == PROFILE_ORDER  # all abstained: the profile order stands
    assert decision.model_calls == 1


@pytest.mark.parametrize("fault", [Fault("status", 500), Fault("malformed"), Fault("drop")])
def test_server_errors_abstain(server: tuple[ChatServer, Scripted], fault: Fault) -> None:
    srv, _ = server
    pool = small_pool()
    srv.faults.append(fault)
    decision = vote(pool, [judge(srv), DirectionJudge()])
    llm, rule = decision.votes
    assert llm.vote is None and llm.error and llm.calls == 1
    assert rule.vote == pool.get("no-listing").id
    assert names(pool, decision.choice)[0] == "no-listing"


def test_an_unreachable_model_abstains() -> None:
    pool = small_pool()
    dead = make_judge(
        "llm:openai:judge@http://127.0.0.1:9/v1", max_retries=0, timeout_s=2.0, connect_timeout_s=1.0
    )
    decision = vote(pool, [dead])
    assert decision.votes[0].vote is None and decision.votes[0].error
    assert names(pool, decision.choice) == PROFILE_ORDER


def test_llm_and_rule_judges_tie_broken_by_profile(server: tuple[ChatServer, Scripted]) -> None:
    srv, script = server
    pool = small_pool()
    script.replies.append("Answer: long-budget")
    decision = vote(pool, [judge(srv), DirectionJudge()])
    # one vote each for long-budget and no-listing: long-budget is first in the profile's order
    assert names(pool, decision.choice) == ["long-budget", "no-listing", "short-budget"]


def test_parse_choice_forms() -> None:
    pool = small_pool()
    from reharness.pool.judges import CandidateView

    views = [CandidateView(s.id, s, None, ProfileCell(), ProfileCell()) for s in pool.siblings]
    ids = [s.id for s in pool.siblings]
    assert parse_choice("Answer: 2", views)[0] == ids[1]
    assert parse_choice(f"answer = {ids[2][:8]}", views)[0] == ids[2]
    assert parse_choice("I pick LONG-BUDGET.", views)[0] == ids[0]
    assert parse_choice("Answer: long-budget\n(not short-budget)", views)[0] == ids[0]
    assert parse_choice("long-budgets are great", views)[0] is None
    with pytest.raises(UnknownNameError, match="direction"):
        make_judge("directon")
