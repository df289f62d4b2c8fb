"""db failure evidence, detectors, runtime signals, action identity and packet masking.

Actions are read with the environment's own v0.2 parser, so a reading matches the env's. Answers the agent
committed are masked in failure packets: each value keeps its shape (``<number>``/``<text>``), not its value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.failures.evidence import executed, normalise
from reharness.failures.text import MaskRule
from reharness.store.records import EpisodeRecord

_DB_WRITE = re.compile(r"^\s*(insert|update|delete|replace)\b", re.IGNORECASE)
#: Task types graded by the table contents rather than by the answer.
MUTATION_TYPES = frozenset({"INSERT", "UPDATE", "DELETE"})
#: Answers in packets: ``Final Answer: [...]`` lines and the ``answers`` argument of the commit tool.
MASK_RULES = (
    MaskRule(r"(Final Answer:[ \t]*)([^\n]*)", "answer", "answers"),
    MaskRule(r'("answers"\s*:\s*)(\[[^\]]*\]|"(?:[^"\\]|\\.)*")', "json_answer", "answers"),
)


@dataclass(frozen=True)
class DbAction:
    """A db action as the env read it: ``kind`` is ``sql``, ``answer`` or ``invalid``."""

    kind: str
    sql: str = ""
    answer: str = ""


def db_action(action: str) -> DbAction:
    """Parse a db action with the environment's own v0.2 parser."""
    from reharness.kits.db.protocol import parse_action

    parsed = parse_action(action)
    return DbAction(parsed.kind, parsed.sql, parsed.answer_raw.strip())


def is_sql_result(observation: str) -> bool:
    """A successful statement shows its rows as a Python list (``[]``, ``[('a', 1)]``); errors show text."""
    return observation.lstrip().startswith("[")


def is_empty_result(observation: str) -> bool:
    return observation.strip() == "[]"


def is_db_write(sql: str) -> bool:
    return bool(_DB_WRITE.match(sql))


def action_key(action: str) -> str:
    """Two actions are the same when they run the same statement (or give the same answer)."""
    parsed = db_action(action)
    if parsed.kind == "sql":
        return "sql:" + normalise(parsed.sql).rstrip(";").strip().lower()
    if parsed.kind == "answer":
        return "answer:" + normalise(parsed.answer)
    return normalise(action).lower()


def detect(record: EpisodeRecord) -> Iterator[Finding]:
    steps = record.steps
    errors = [
        s.index
        for s in steps
        if executed(s) and db_action(s.action or "").kind == "sql" and not is_sql_result(s.observation)
    ]
    yield Finding(FailureCode.SQL_ERROR, tuple(errors), f"{len(errors)} SQL statement(s) failed")
    last = steps[-1] if steps else None
    if record.termination == "terminated" and last is not None:
        why = _premature(record)
        if why:
            yield Finding(FailureCode.PREMATURE_ANSWER, (last.index,), why)


def _premature(record: EpisodeRecord) -> str | None:
    last = record.steps[-1]
    if record.score >= 1.0 or last.action is None or db_action(last.action).kind != "answer":
        return None
    before = [s for s in record.steps[:-1] if executed(s) and db_action(s.action or "").kind == "sql"]
    if record.task_type.upper() in MUTATION_TYPES:
        writes = [s for s in before if is_db_write(db_action(s.action or "").sql)]
        if not any(is_sql_result(s.observation) for s in writes):
            return "committed before any INSERT/UPDATE/DELETE statement succeeded"
        return None
    if not any(is_sql_result(s.observation) and not is_empty_result(s.observation) for s in before):
        return "answered before any query returned rows"
    return None


def signals(record: EpisodeRecord) -> dict[str, int | float]:
    """``sql_count``, ``sql_errors``, ``empty_results``, ``repeated_sql`` (a statement run before),
    ``answer_given`` (0/1)."""
    statements: list[str] = []
    errors = empty = repeated = answered = 0
    for step in record.steps:
        if not executed(step):
            continue
        parsed = db_action(step.action or "")
        if parsed.kind == "answer":
            answered = 1
        elif parsed.kind == "sql":
            key = action_key(step.action or "")
            repeated += key in statements
            statements.append(key)
            errors += not is_sql_result(step.observation)
            empty += is_empty_result(step.observation)
    return {
        "sql_count": len(statements),
        "sql_errors": errors,
        "empty_results": empty,
        "repeated_sql": repeated,
        "answer_given": answered,
    }
