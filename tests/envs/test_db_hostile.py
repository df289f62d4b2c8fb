"""Issue 20 item 2: no agent statement takes super-linear time, and a slow step never stalls other episodes.

REGEXP runs on RE2 (linear time), so the backtracking patterns that took 17 s (500 characters) and 112 s (800)
answer at once, with MySQL's result; a matcher call whose worst case (pattern × subject) is beyond the
statement's budget is refused before it runs; and a statement that does run to its limit runs in a worker
thread, so the other episodes of the batch keep stepping meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from reharness.core.types import ChatRequest, ChatResponse
from reharness.kits.db import SqlSandbox
from reharness.kits.db.sandbox import SandboxLimits
from reharness.runtime import Agent, Harness, RunSpec, base_harness_config, run_batch
from reharness.runtime.protocols import render_action

LIMIT_S = SandboxLimits().wall_seconds


@pytest.fixture
def sandbox() -> SqlSandbox:
    sb = SqlSandbox("t")
    sb.create_table("t", ["name"], [["fc zürich"], ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaab"]])
    return sb


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        ("SELECT REPEAT('a', 500) REGEXP 'a*a*a*c'", [(0,)]),  # 17.6 s before
        ("SELECT REPEAT('a', 800) REGEXP 'a*a*a*c'", [(0,)]),  # 112 s before
        ("SELECT REPEAT('a', 90000) REGEXP 'a*a*a*a*a*a*a*a*c'", [(0,)]),
        ("SELECT CONCAT(REPEAT('a', 90000), 'C') REGEXP 'a*a*a*c'", [(1,)]),  # case-insensitive, long subject
        ("SELECT REPEAT('ab', 40000) REGEXP '^(a|b|ab)*c'", [(0,)]),
        ("SELECT REPEAT('a', 50000) REGEXP '(a+)+$'", [(1,)]),
        ("SELECT REPEAT('x', 60000) REGEXP '(x+x+)+y'", [(0,)]),
        ("SELECT COUNT(*) FROM t WHERE name REGEXP '(a+)+b$'", [(1,)]),
        ("SELECT COUNT(*) FROM t WHERE name REGEXP '^FC [[:alpha:]]+$'", [(1,)]),  # ü is a letter
        ("SELECT REPEAT('a', 100000) REGEXP CONCAT(REPEAT('a?', 240), REPEAT('a', 10))", [(1,)]),
        ("SELECT REPEAT('a', 90000) LIKE CONCAT('%', REPEAT('a%', 400), 'b')", [(0,)]),
        ("SELECT REPEAT('a', 90000) LIKE CONCAT('%', REPEAT('_', 500), 'b%')", [(0,)]),
    ],
)
def test_backtracking_inputs_answer_at_once(sandbox: SqlSandbox, sql: str, rows: list[Any]) -> None:
    start = time.monotonic()
    result = sandbox.execute(sql)
    assert result.ok, result.error
    assert result.rows == rows
    assert time.monotonic() - start < 0.5


@pytest.mark.parametrize(
    "sql",
    [
        # worst case subject × pattern far beyond one statement's budget: refused before the call runs
        "SELECT REPEAT('a', 100000) LIKE CONCAT('%', REPEAT('_', 15000), 'b%')",
        "SELECT REPEAT('ab', 50000) LIKE CONCAT(REPEAT('_', 9000), '%', REPEAT('_', 9000), 'c')",
    ],
)
def test_too_costly_matches_are_refused_within_the_limit(sandbox: SqlSandbox, sql: str) -> None:
    start = time.monotonic()
    result = sandbox.execute(sql)
    assert time.monotonic() - start < 0.5
    assert not result.ok and result.error == "Query timed out" and result.error_kind == "timeout"
    assert sandbox.execute("SELECT COUNT(*) FROM t").rows == [(2,)]


def test_unsupported_regexp_features_are_clear_errors(sandbox: SqlSandbox) -> None:
    result = sandbox.execute("SELECT 'abab' REGEXP '(?=ab)ab'")
    assert not result.ok and "look-arounds are not supported" in (result.error or "")
    result = sandbox.execute("SELECT 'x' REGEXP 'a{2000}'")
    assert not result.ok and "invalid REGEXP pattern" in (result.error or "")


# One statement that works until the statement limit stops it (~1 s here): Python callbacks over many rows.
SLOW_SQL = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 10000000) "
    "SELECT count(*) FROM c WHERE md5(REPEAT(x, 5000)) = 'z'"
)
HOSTILE = [SLOW_SQL, "SELECT REPEAT('a', 800) REGEXP 'a*a*a*c'"]


class HostileFirstEpisode(Agent):
    """Episode 0 sends the hostile statements first; every episode then plays the solver. Logs call times."""

    policy_id = "hostile-first"

    def __init__(self, log: list[tuple[int, int, float]], env: Any = None, protocol: str = "text") -> None:
        self.log, self.env, self.protocol = log, env, protocol

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return HostileFirstEpisode(self.log, env, protocol)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        episode = int(request.metadata["episode"])
        step = sum(1 for e, _, _ in self.log if e == episode)
        self.log.append((episode, step, time.monotonic()))
        if episode == 0 and step < len(HOSTILE):
            return ChatResponse(text=f"Action: Operation\n```sql\n{HOSTILE[step]}\n```")
        return render_action(self.protocol, str(self.env.expert_action()), self.env)


def test_a_statement_at_its_limit_does_not_stall_the_other_episodes(tmp_path: Path) -> None:
    log: list[tuple[int, int, float]] = []
    spec = RunSpec(env="db", agent="hostile-first", n=24, concurrency=4)
    harness = Harness(base_harness_config("db"))
    result = asyncio.run(run_batch(spec, HostileFirstEpisode(log), harness, tmp_path))
    first = result.episodes[0]
    assert [s.observation for s in first.steps[:2]] == ["Query timed out", "[(0,)]"]
    assert first.success  # the episode goes on after the hostile statements and solves its task
    assert first.steps[0].duration_s < LIMIT_S + 1.0 and first.steps[1].duration_s < 0.5
    sent, next_call = (next(t for e, s, t in log if e == 0 and s == k) for k in (0, 1))
    during = [(e, s) for e, s, t in log if e != 0 and sent < t < next_call]
    assert next_call - sent > 0.1  # the statement really ran for a while …
    assert len(during) >= 3, during  # … and the other episodes kept stepping meanwhile
    assert all(e.success for e in result.episodes)


@pytest.mark.parametrize(
    "reply",
    [
        "Action: " * 25_000,  # 25 s with Python's engine at 20,000 repeats
        "```sql\nx" * 25_000,
        "Action: Operation\n" + "```sql\n" + " " * 200_000 + "x",
        "Final Answer: " + "\n" * 200_000,
    ],
)
def test_hostile_replies_parse_in_linear_time(reply: str) -> None:
    from reharness.kits.db.protocol import parse_action

    start = time.monotonic()
    parsed = parse_action(reply)
    assert time.monotonic() - start < 0.5
    assert parsed.kind in ("invalid", "answer")


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("action: x" + " " * 200_000 + "y", "x" + " " * 200_000 + "y"),  # 2 s at 20,000 spaces before
        ("\n" * 200_000 + "Think", None),
        ("<tool_call>x" + " " * 200_000 + "y", "<tool_call>x" + " " * 200_000 + "y"),
    ],
)
def test_hostile_replies_to_the_generic_parsers_are_linear(reply: str, action: str | None) -> None:
    from reharness.models.base import parse_text_tool_calls
    from reharness.runtime.protocols import parse_action

    start = time.monotonic()
    parsed = parse_action("text", ChatResponse(text=reply), None)
    calls = parse_text_tool_calls(reply)
    assert time.monotonic() - start < 0.5
    assert parsed.action == action
    assert len(calls) == (1 if reply.startswith("<tool_call>") else 0)
