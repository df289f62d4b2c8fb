"""Scripted DBBench policies: the state-based expert, the gold player for real files, and random actions.

* Select types: run the reference query once (generated tasks only; the stored SELECTs of the real files are
  unreliable), then answer the label.
* INSERT/UPDATE: decided from the table as it is now. Target hash reached → answer; table as initially → run
  the reference statement; anything else (the table was changed off-path) → restore it step by step
  (re-create, empty, re-insert the original rows), then apply the reference. It recovers from any detour.
* Random actions are well formed: a simple SELECT over the table, or (one time in five) an answer made of
  random cell values.
"""

from __future__ import annotations

import random
from typing import Any

from reharness.envs.base import Task
from reharness.kits.db.gold import MUTATIONS
from reharness.kits.db.grading import table_hash
from reharness.kits.db.protocol import format_answer, format_sql
from reharness.kits.db.sandbox import SqlSandbox
from reharness.kits.db.sqltext import mysql_string, quote_ident
from reharness.kits.db.tracker import EpisodeTracker

_MAX_REFERENCE_RUNS = 2


def _restore(sandbox: SqlSandbox, table: dict[str, Any]) -> str:
    """The next statement that brings the table back to its initial content."""
    name, columns, rows = table["name"], table["columns"], table["rows"]
    current = sandbox.table_rows(name, columns)
    if current is None:
        if sandbox.resolve_table(name) is not None:
            return f"DROP TABLE {quote_ident(name)}"
        cols = ", ".join(f"{quote_ident(c)} TEXT" for c in columns)
        return f"CREATE TABLE {quote_ident(name)} ({cols})"
    if current:
        return f"DELETE FROM {quote_ident(name)}"
    values = ", ".join(
        "(" + ", ".join("NULL" if v is None else mysql_string(v) for v in row) + ")" for row in rows
    )
    cols = ", ".join(quote_ident(c) for c in columns)
    return f"INSERT INTO {quote_ident(name)} ({cols}) VALUES {values}"


def mutation_action(task: Task, sandbox: SqlSandbox, tracker: EpisodeTracker) -> str:
    table = task.state["table"]
    target = task.gold.get("answer_md5")
    reference = task.gold.get("sql")
    current = sandbox.table_hash(table["name"], table["columns"])
    if current == target or not reference or tracker.ran(reference) >= _MAX_REFERENCE_RUNS:
        return format_answer([])  # done, or the reference cannot reach the target here: stop trying
    pristine = current == table_hash(table["rows"])
    if pristine and sandbox.table_rows(table["name"], table["columns"]) is not None:
        return format_sql(reference)
    return format_sql(_restore(sandbox, table))


def expert_action(
    task: Task, sandbox: SqlSandbox, tracker: EpisodeTracker, run_reference: bool = True
) -> str:
    """The correct next action from the current state (``run_reference=False``: answer selects directly)."""
    if task.task_type in MUTATIONS:
        return mutation_action(task, sandbox, tracker)
    reference = task.gold.get("sql")
    if run_reference and task.gold.get("reference_select") and reference and not tracker.ran(reference):
        return format_sql(reference)
    return format_answer(list(task.gold.get("label") or []))


def random_action(task: Task, rng: random.Random) -> str:
    """A random well-formed action over the task's table."""
    table = task.state["table"]
    name, columns, rows = quote_ident(table["name"]), table["columns"], table["rows"]
    cells = [v for row in rows for v in row if v is not None]
    if cells and rng.random() < 0.2:
        return format_answer(rng.sample(cells, min(len(cells), rng.choice((1, 1, 2)))))
    col = quote_ident(rng.choice(columns))
    other = quote_ident(rng.choice(columns))
    choice = rng.randrange(5)
    if choice == 0:
        return format_sql(f"SELECT * FROM {name} LIMIT {rng.randint(1, 5)}")
    if choice == 1:
        return format_sql(f"SELECT {col} FROM {name}")
    if choice == 2 and cells:
        row = rng.choice(rows)
        i = rng.randrange(len(columns))
        if row[i] is not None:
            return format_sql(
                f"SELECT {col} FROM {name} WHERE {quote_ident(columns[i])} = {mysql_string(row[i])}"
            )
    if choice == 3:
        return format_sql(f"SELECT COUNT(*) FROM {name}")
    return format_sql(f"SELECT {col} FROM {name} ORDER BY {other} DESC LIMIT 1")
