"""Harness notes made only of what a harness can observe, for db demonstrations.

The default interventions (:mod:`.interventions`) name the expert's next action ("Try: <the right SQL>"). In
household and shop a harness can say as much (the admissible list holds the right command), but no db harness
knows the right query, so a db agent trained on such notes learns to wait for a query it is never given
(measured: a db target trained with them scored 18% and no repair operator moved it). Observed notes say
what a generic hook could compute at that moment instead — the statement's visible defect (values vs.
columns, a missing SET, a clause written twice, an unknown column), the error kind, the table's columns, or
"no query has succeeded yet" — and the expert's corrected statement follows, so the agent learns to act on
such notes by writing a better statement rather than by copying one.

Phrasings vary and are not the repair operators' exact strings. Pure functions of their inputs and ``rng``.
"""

from __future__ import annotations

import random
import re

from reharness.kits.db.intent import intent_problem
from reharness.kits.db.near_miss import split_top_level
from reharness.kits.db.sqltext import SqlSyntaxError

_INSERT = re.compile(r"\((.*?)\)\s*VALUES\s*\((.*)\)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_IDENT = re.compile(r"`([^`]+)`")
_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE|TABLE)\s+`([^`]+)`", re.IGNORECASE)
_KIND_TEXT = {
    "syntax_error": "a syntax error",
    "no_such_column": "an unknown column",
    "no_such_table": "an unknown table",
}


def sql_problem(sql: str, columns: list[str], question: str = "") -> str | None:
    """The defect a hook can see in ``sql`` before running it, in words (None: none visible); with the
    ``question``, also where the statement contradicts it (:mod:`reharness.kits.db.intent`)."""
    low = " ".join(sql.lower().split())
    if low.count(" where ") > 1 or low.count(" from ") > 1 or low.count(" values ") > 1:
        return "a clause is written twice"
    if low.startswith("insert"):
        match = _INSERT.search(sql)
        if match:
            try:
                names, values = split_top_level(match.group(1)), split_top_level(match.group(2))
            except SqlSyntaxError:
                return "a quote is not closed"
            if len(names) != len(values):
                return f"{len(values)} values for {len(names)} columns"
    if low.startswith("update") and " set " not in low:
        return "an UPDATE needs SET `column` = 'value' before WHERE"
    known = {c.lower() for c in columns} | {t.lower() for t in _TABLE.findall(sql)}
    unknown = [n for n in _IDENT.findall(sql) if n.lower() not in known]
    if unknown:
        return f"there is no column `{unknown[0]}`"
    return intent_problem(sql, question) if question else None


def _columns_text(columns: list[str]) -> str:
    return "Known columns: " + ", ".join(f"`{c}`" for c in columns) + "."


def observed_block(problem: str | None, error: str, columns: list[str], rng: random.Random) -> str:
    """A block message in place of the reply to a failing or visibly wrong statement."""
    problem = problem or f"it would fail with {_KIND_TEXT.get(error, 'an error')}"
    lead = rng.choice(
        ("Blocked: ", "Not run: ", "That statement would fail: " if error != "none" else "Check: ")
    )
    tail = rng.choice(("", " Write the statement again.", " " + _columns_text(columns)))
    return f"{lead}{problem}.{tail}"


def observed_hint(problem: str | None, error: str, columns: list[str], rng: random.Random) -> str:
    """A note after the environment's reply to a failing or visibly wrong statement."""
    if error == "none":
        text = rng.choice(("Check the query: ", "That result may not answer the question: ")) + f"{problem}."
    else:
        lead = rng.choice(("The last SQL statement failed", "That statement did not run", "The query failed"))
        text = f"{lead} ({_KIND_TEXT.get(error, 'an error')})"
        text += f": {problem}." if problem else "."
    if rng.random() < 0.6:
        text += " " + _columns_text(columns)
    return text


def observed_premature(after_error: bool, rng: random.Random) -> str:
    """The block message for an answer given before any statement succeeded or right after a failure."""
    lead = rng.choice(("Not answering yet: ", "Do not answer yet: "))
    if after_error:
        return lead + rng.choice(
            (
                "the last statement failed, so there is no result to answer from. Fix it first.",
                "the last SQL statement did not run. Correct it and run it first.",
            )
        )
    return lead + rng.choice(
        (
            "no SQL statement has succeeded yet. Query the table first.",
            "nothing has been read from the table yet. Run a query first.",
        )
    )


_SQL = re.compile(r"```sql\s*(.*?)\s*```", re.DOTALL)


class ObservedSqlNotes:
    """The db kit's observed notes (:class:`reharness.models.tiny.spec.ObservedNotes`)."""

    def problem(self, reply: str, choices: list[str], instruction: str) -> str | None:
        match = _SQL.search(reply)
        return sql_problem(match.group(1) if match else reply.strip(), choices, instruction)

    def block(self, problem: str | None, error: str, choices: list[str], rng: random.Random) -> str:
        return observed_block(problem, error, choices, rng)

    def hint(self, problem: str | None, error: str, choices: list[str], rng: random.Random) -> str:
        return observed_hint(problem, error, choices, rng)

    def premature(self, after_error: bool, rng: random.Random) -> str:
        return observed_premature(after_error, rng)
