"""Natural-language DBBench tasks over a generated table, one builder per AgentBench task type.

Each builder returns ``(description, reference_sql)`` in AgentBench's style (WikiSQL-like questions such as
"What is the Points when the Club is fc koln?", INSERT/UPDATE requests naming the exact values), or ``None``
when the table cannot support that type. The reference SQL is MySQL that handles the TEXT encodings properly
(``CAST(REPLACE(col, ',', '') AS SIGNED)``); the label is whatever it returns, computed in :mod:`.generator`.
Entities are sometimes written lower-case or without accents, as in the real questions, which only the
case/accent-insensitive MySQL collation resolves.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable

from reharness.kits.db.functions import fold
from reharness.kits.db.sqltext import mysql_string, quote_ident
from reharness.kits.db.themes import NUMERIC_KINDS, GenTable

Built = tuple[str, str] | None
_NOT_AGGREGATED = {"Position", "Rank", "Pos", "Year", "First elected"}


def casual(value: str, rng: random.Random) -> str:
    """Sometimes write an entity as a person would: lower-case or without accents."""
    roll = rng.random()
    if roll < 0.15:
        return value.lower()
    if roll < 0.3:
        stripped = "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))
        return unicodedata.normalize("NFC", stripped)
    return value


def num_expr(table: GenTable, col: int) -> str:
    """MySQL expression reading column ``col`` as a number."""
    q = quote_ident(table.columns[col])
    kind = table.kinds[col]
    if kind == "comma":
        return f"CAST(REPLACE({q}, ',', '') AS SIGNED)"
    if kind == "money":
        return f"CAST(REPLACE(REPLACE({q}, '$', ''), ',', '') AS SIGNED)"
    if kind == "percent":
        return f"CAST(REPLACE({q}, '%', '') AS DECIMAL(10,2))"
    if kind == "decimal":
        return f"CAST({q} AS DECIMAL(10,2))"
    return f"CAST({q} AS SIGNED)"


def _number_literal(table: GenTable, value: str) -> str:
    number = table.numeric(value)
    return str(int(number)) if number.is_integer() else str(number)


def _unique_columns(table: GenTable) -> list[int]:
    """Non-numeric columns whose values identify one row."""
    out = []
    for i, kind in enumerate(table.kinds):
        if kind in ("key", "text", "date"):
            values = [fold(r[i]) for r in table.rows]
            if len(set(values)) == len(values):
                out.append(i)
    return out


def _where_cat(rng: random.Random, table: GenTable) -> tuple[str, str] | None:
    """A ``WHERE cat = v`` condition on a repeated value: (sql, phrase)."""
    cats = table.categorical()
    if not cats:
        return None
    c = rng.choice(cats)
    values = [r[c] for r in table.rows]
    repeated = sorted({v for v in values if sum(fold(x) == fold(v) for x in values) > 1})
    v = rng.choice(repeated)
    sql = f" WHERE {quote_ident(table.columns[c])} = {mysql_string(v)}"
    return sql, f"{table.columns[c]} is {casual(v, rng)}"


def other(rng: random.Random, t: GenTable) -> Built:
    keys = _unique_columns(t)
    cond = t.key if rng.random() < 0.7 or len(keys) == 1 else rng.choice(keys)
    targets = [i for i in range(len(t.columns)) if i != cond]
    row = rng.choice(t.rows)
    target = rng.choice(targets)
    if not row[target]:
        return None
    C, K, v = t.columns[target], t.columns[cond], casual(row[cond], rng)
    description = rng.choice(
        (
            f"What is the {C} when the {K} is {v}?",
            f"What {C} has a {K} of {v}?",
            f"Which {C} has a {K} of {v}?",
            f"what was the {C.lower()} of {v}?",
        )
    )
    where = f"{quote_ident(K)} = {mysql_string(row[cond])}"
    sql = f"SELECT {quote_ident(C)} FROM {quote_ident(t.name)} WHERE {where}"
    return description, sql


def counting(rng: random.Random, t: GenTable) -> Built:
    if rng.random() < 0.5:
        where = _where_cat(rng, t)
        if where is None:
            return None
        sql_where, phrase = where
        description = rng.choice(
            (
                f"How many {t.plural} are there where the {phrase}?",
                f"What is the total number of {t.plural} when the {phrase}?",
                f"how many {t.plural} have the {phrase.replace(' is ', ' of ', 1)}?",
            )
        )
        return description, f"SELECT COUNT(*) FROM {quote_ident(t.name)}{sql_where}"
    nums = [i for i, k in enumerate(t.kinds) if k in NUMERIC_KINDS]
    if not nums:
        return None
    c = rng.choice(nums)
    values = sorted({t.numeric(r[c]) for r in t.rows})
    if len(values) < 3:
        return None
    pivot = rng.choice(values[1:-1])
    pivot_text = next(r[c] for r in t.rows if t.numeric(r[c]) == pivot)
    more = rng.random() < 0.5
    word, op = ("greater than", ">") if more else ("less than", "<")
    description = f"How many {t.plural} have a {t.columns[c]} {word} {pivot_text}?"
    condition = f"{num_expr(t, c)} {op} {_number_literal(t, pivot_text)}"
    sql = f"SELECT COUNT(*) FROM {quote_ident(t.name)} WHERE {condition}"
    return description, sql


def comparison(rng: random.Random, t: GenTable) -> Built:
    nums = t.distinct_numeric()
    if not nums:
        return None
    c = rng.choice(nums)
    C, K, name = t.columns[c], t.columns[t.key], quote_ident(t.name)
    if rng.random() < 0.5:
        a, b = rng.sample(t.rows, 2)
        higher = rng.random() < 0.5
        word = "higher" if higher else "lower"
        description = rng.choice(
            (
                f"Which {t.noun} has a {word} {C}, {casual(a[t.key], rng)} or {casual(b[t.key], rng)}?",
                f"Between {a[t.key]} and {b[t.key]}, which {t.noun} had the {word} {C}?",
            )
        )
        keys = f"{mysql_string(a[t.key])}, {mysql_string(b[t.key])}"
        order = "DESC" if higher else "ASC"
        where = f"{quote_ident(K)} IN ({keys})"
        sql = f"SELECT {quote_ident(K)} FROM {name} WHERE {where} ORDER BY {num_expr(t, c)} {order} LIMIT 1"
        return description, sql
    ranked = sorted(t.rows, key=lambda r: t.numeric(r[c]), reverse=True)
    cut = ranked[rng.randint(1, min(4, len(ranked) - 2))][c]
    description = rng.choice(
        (f"Which {K} has a {C} greater than {cut}?", f"Which {t.plural} have more {C} than {cut}?")
    )
    sql = f"SELECT {quote_ident(K)} FROM {name} WHERE {num_expr(t, c)} > {_number_literal(t, cut)}"
    return description, sql


def ranking(rng: random.Random, t: GenTable) -> Built:
    nums = t.distinct_numeric()
    if not nums:
        return None
    c = rng.choice(nums)
    C, name = t.columns[c], quote_ident(t.name)
    highest = rng.random() < 0.5
    nth = 2 if rng.random() < 0.25 else 1
    target = t.key if rng.random() < 0.7 else rng.choice([i for i in range(len(t.columns)) if i != c])
    T = t.columns[target]
    word = (
        ("highest" if highest else "lowest")
        if nth == 1
        else ("second highest" if highest else "second lowest")
    )
    if target == t.key:
        description = rng.choice(
            (f"Which {t.noun} has the {word} {C}?", f"which {t.noun} had the {word} {C.lower()}?")
        )
    else:
        description = f"What is the {T} of the {t.noun} with the {word} {C}?"
    order = "DESC" if highest else "ASC"
    offset = " OFFSET 1" if nth == 2 else ""
    sql = f"SELECT {quote_ident(T)} FROM {name} ORDER BY {num_expr(t, c)} {order} LIMIT 1{offset}"
    return description, sql


def _aggregate(func: str, words: tuple[str, ...]) -> Callable[[random.Random, GenTable], Built]:
    def build(rng: random.Random, t: GenTable) -> Built:
        nums = [
            i for i, k in enumerate(t.kinds) if k in NUMERIC_KINDS and t.columns[i] not in _NOT_AGGREGATED
        ]
        if not nums:
            return None
        c = rng.choice(nums)
        where = _where_cat(rng, t) if rng.random() < 0.6 else None
        sql_where, phrase = where if where else ("", "")
        word = rng.choice(words)
        if phrase:
            description = rng.choice(
                (
                    f"What is the {word} {t.columns[c]} when the {phrase}?",
                    f"When the {phrase}, what is the {word} {t.columns[c]}?",
                )
            )
        else:
            description = f"What is the {word} {t.columns[c]} of all {t.plural}?"
        return description, f"SELECT {func}({num_expr(t, c)}) FROM {quote_ident(t.name)}{sql_where}"

    return build


def insert(rng: random.Random, t: GenTable) -> Built:
    cols, vals = t.columns, t.spare
    table = t.name
    pairs = [f"{c} '{v}'" for c, v in zip(cols, vals, strict=True)]
    style = rng.randrange(3)
    if style == 0:
        description = (
            f"Insert a new record into the '{table}' table with {', '.join(pairs[:-1])} and {pairs[-1]}."
        )
    elif style == 1:
        quoted = ", ".join(f"'{v}'" for v in vals)
        description = f"Add ({quoted}) to the '{table}' table through INSERT INTO command."
    else:
        rest = [f"'{v}' for '{c}'" for c, v in zip(cols, vals, strict=True) if c != cols[t.key]]
        description = (
            f"Insert '{vals[t.key]}' into '{table}' with values {', '.join(rest[:-1])}, and {rest[-1]}."
        )
    col_sql = ", ".join(quote_ident(c) for c in cols)
    val_sql = ", ".join(mysql_string(v) for v in vals)
    return description, f"INSERT INTO {quote_ident(table)} ({col_sql}) VALUES ({val_sql})"


def update(rng: random.Random, t: GenTable) -> Built:
    row = rng.choice(t.rows)
    editable = [
        i for i in range(len(t.columns)) if i != t.key and t.spare[i] and fold(t.spare[i]) != fold(row[i])
    ]
    if not editable:
        return None
    chosen = sorted(rng.sample(editable, min(len(editable), rng.choice((1, 1, 2)))))
    K, key = t.columns[t.key], row[t.key]
    shown_key = casual(key, rng)
    sets = [(t.columns[i], t.spare[i]) for i in chosen]
    if len(sets) == 1:
        ((C, v),) = sets
        description = rng.choice(
            (
                f"Update the {C} of {shown_key} to '{v}' in the '{t.name}' table.",
                f"Change the value of {C} to '{v}' in the {t.name} table "
                f"for the {t.noun} named '{shown_key}'.",
            )
        )
    else:
        (c1, v1), (c2, v2) = sets
        description = (
            f"In the '{t.name}' table, set {c1} to '{v1}' and {c2} to '{v2}' where {K} is '{shown_key}'."
        )
    assignments = ", ".join(f"{quote_ident(c)} = {mysql_string(v)}" for c, v in sets)
    return (
        description,
        f"UPDATE {quote_ident(t.name)} SET {assignments} WHERE {quote_ident(K)} = {mysql_string(key)}",
    )


BUILDERS: dict[str, Callable[[random.Random, GenTable], Built]] = {
    "other": other,
    "counting": counting,
    "comparison": comparison,
    "ranking": ranking,
    "aggregation-SUM": _aggregate("SUM", ("total", "sum of the")),
    "aggregation-MIN": _aggregate("MIN", ("lowest", "smallest", "minimum")),
    "aggregation-MAX": _aggregate("MAX", ("highest", "largest", "maximum")),
    "aggregation-AVG": _aggregate("AVG", ("average", "mean")),
    "INSERT": insert,
    "UPDATE": update,
}
