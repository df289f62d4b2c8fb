"""Near-miss perturbations: the expert's own SQL statement with one mistake of the kind tiny agents make.

Random perturbations (a simple SELECT over the table) never fail, so a db agent trained on them has only
ever seen "one query, then answer" and answers right after its own broken statement (measured on
``tiny:db-S``: 17 of 17 held-out INSERTs failed, most after "N values for M columns"). A near miss keeps the
expert's statement and breaks one part of it the way the trained agents do — a value dropped or doubled, an
UPDATE without its SET clause, a WHERE clause written twice, a wrong or misspelled column, the opposite
aggregate or sort order, the filter column selected instead of the asked one — so the demonstrations show
the error the environment reports (or a wrong result) and the corrected statement that follows it.

Every function is pure given the random generator; a statement that offers no applicable mistake gives None.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING

from reharness.kits.db.protocol import format_sql, parse_action
from reharness.kits.db.sqltext import tokenize

if TYPE_CHECKING:
    from reharness.kits.db.env import DBEnv

_VALUES = re.compile(r"(\bVALUES\s*\()(.*)(\)\s*;?\s*)$", re.IGNORECASE | re.DOTALL)
_SET = re.compile(r"\s+SET\s+.*?(?=\s+WHERE\s)", re.IGNORECASE | re.DOTALL)
_WHERE = re.compile(r"\s+WHERE\s+.*?(?=\s+(ORDER|GROUP|LIMIT)\b|$)", re.IGNORECASE | re.DOTALL)
_IDENT = re.compile(r"`([^`]+)`")
_AGGREGATE = re.compile(r"\b(MIN|MAX|AVG|SUM)\(")
_ORDER = re.compile(r"\b(ASC|DESC)\b")
_FILTERED = re.compile(r"^SELECT `([^`]+)` FROM (`[^`]+`) WHERE `([^`]+)` = ")
_SWAPS = {"MIN": "MAX", "MAX": "MIN", "AVG": "SUM", "SUM": "AVG", "ASC": "DESC", "DESC": "ASC"}


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside string literals and quoted names (MySQL quoting: the db
    env's own :func:`~reharness.kits.db.sqltext.tokenize`)."""
    parts: list[list[str]] = [[]]
    for token in tokenize(text):
        if token.kind == "punct" and token.text == ",":
            parts.append([])
        else:
            parts[-1].append(token.text)
    return [joined for part in parts if (joined := "".join(part).strip())]


def _insert_misses(sql: str, rng: random.Random) -> list[str]:
    match = _VALUES.search(sql)
    if not match:
        return []
    values = split_top_level(match.group(2))
    if len(values) < 2:
        return []
    dropped = list(values)
    del dropped[rng.randrange(len(dropped))]
    doubled = list(values)
    at = rng.randrange(len(doubled))
    doubled[at:at] = [doubled[at]] * rng.randint(1, 3)
    head, tail = sql[: match.start(2)], sql[match.end(2) :]
    return [head + ", ".join(v) + tail for v in (dropped, doubled)]


def _update_misses(sql: str) -> list[str]:
    out = []
    no_set = _SET.sub("", sql, count=1)
    if no_set != sql:
        out.append(no_set)
    return out


def _repeat_where(sql: str) -> list[str]:
    match = _WHERE.search(sql)
    if not match:
        return []
    return [sql[: match.end()] + match.group(0) + sql[match.end() :]]


def _column_misses(sql: str, columns: list[str], rng: random.Random) -> list[str]:
    used = [m for m in _IDENT.finditer(sql) if m.group(1) in columns]
    if not used:
        return []
    spot = rng.choice(used)
    name = spot.group(1)
    out = []
    others = [c for c in columns if c != name]
    if others:
        out.append(sql[: spot.start(1)] + rng.choice(others) + sql[spot.end(1) :])
    if len(name) > 2:
        out.append(sql[: spot.start(1)] + name[:-1] + sql[spot.end(1) :])
    return out


def _intent_misses(sql: str) -> list[str]:
    """The opposite aggregate or sort order, or the filter column selected instead of the asked one."""
    out = []
    for pattern in (_AGGREGATE, _ORDER):
        found = pattern.search(sql)
        if found:
            out.append(sql[: found.start(1)] + _SWAPS[found.group(1)] + sql[found.end(1) :])
    found = _FILTERED.search(sql)
    if found and found.group(1) != found.group(3):
        out.append(sql[: found.start(1)] + found.group(3) + sql[found.end(1) :])
    return out


def sql_near_miss(sql: str, columns: list[str], rng: random.Random) -> str | None:
    """``sql`` with one plausible mistake (see the module docstring), or None when none applies."""
    low = sql.lstrip().lower()
    candidates: list[str] = []
    if low.startswith("insert"):
        candidates += _insert_misses(sql, rng)
    elif low.startswith("update"):
        candidates += _update_misses(sql) + _repeat_where(sql)
    elif low.startswith("select"):
        candidates += _column_misses(sql, columns, rng) + _repeat_where(sql) + _intent_misses(sql)
    candidates = [c for c in dict.fromkeys(candidates) if c != sql]
    return rng.choice(candidates) if candidates else None


def table_columns(env: DBEnv) -> list[str]:
    """The columns of the episode's table."""
    assert env.task is not None, "call reset() first"
    return [str(c) for c in env.task.state["table"]["columns"]]


def near_miss_action(env: DBEnv, expert: str, rng: random.Random) -> str | None:
    """The expert's action with one near-miss mistake (SQL statements only; None for an answer)."""
    parsed = parse_action(expert)
    if parsed.kind != "sql":
        return None
    sql = sql_near_miss(parsed.sql, table_columns(env), rng)
    return format_sql(sql) if sql else None
