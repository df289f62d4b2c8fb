"""Task gold computed by running reference SQL: labels for select types, table hashes for mutations.

Shared by the generator (generated tasks) and the loader (real files whose mutation lacks a stored hash):
the reference statement runs on a fresh :class:`~.sandbox.SqlSandbox` holding the task's table, through the
same MySQL layer the agent uses, so gold and agent see identical semantics.
"""

from __future__ import annotations

from typing import Any

from reharness.kits.db.sandbox import SqlSandbox

TASK_TYPES = (
    "other",
    "counting",
    "comparison",
    "ranking",
    "aggregation-SUM",
    "aggregation-MIN",
    "aggregation-MAX",
    "aggregation-AVG",
    "INSERT",
    "UPDATE",
)
MUTATIONS = ("INSERT", "UPDATE", "DELETE")


def table_state(name: str, columns: list[str], rows: list[list[str | None]]) -> dict[str, Any]:
    return {"name": name, "columns": list(columns), "rows": [list(r) for r in rows]}


def build_sandbox(state: Any) -> SqlSandbox:
    """A fresh sandbox holding the task's table (the database is named after the table, as in v0.2)."""
    table = state["table"]
    sandbox = SqlSandbox(database=table["name"])
    sandbox.create_table(table["name"], table["columns"], table["rows"])
    return sandbox


def compute_gold(state: Any, task_type: str, sql: str) -> dict[str, Any] | None:
    """Run ``sql`` on a fresh copy of the table; return the gold, or None if the SQL is unusable."""
    table = state["table"]
    sandbox = build_sandbox(state)
    try:
        before = sandbox.table_hash(table["name"], table["columns"])
        result = sandbox.execute(sql)
        if not result.ok:
            return None
        if task_type in MUTATIONS:
            after = sandbox.table_hash(table["name"], table["columns"])
            if after == before:
                return None
            return {"label": None, "sql": sql, "answer_md5": after, "reference_select": False}
        values = [v for row in result.rows or [] for v in row]
        if not values or any(v is None or v == "" for v in values):
            return None
        label = [str(v) for v in values]
        return {"label": label, "sql": sql, "answer_md5": None, "reference_select": True}
    finally:
        sandbox.close()
