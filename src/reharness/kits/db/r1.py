"""Harness-R1's DBBench ``ctx`` for ``db`` (spec §2.3): ``action``, ``state``, ``task``, ``dbbench``,
``predicates`` and nothing else (no ``observation`` key, as in the original).

Hooks fire as upstream: ``on_before_action`` only for an ``execute_sql`` or ``commit_final_answer`` call,
``on_post_step`` only after an executed SQL statement. The result classification follows the official
order on the response text, with SQLite's messages mapped onto the MySQL ones it looks for
("no such column" → ``unknown_col``, "no such table" → ``unknown_table``, any other error → ``syntax``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.kits.db import protocol
from reharness.kits.db.grading import answer_value
from reharness.runtime.r1.adapter import Proposal, R1Adapter

MUTATIONS = ("INSERT", "UPDATE", "DELETE")
TASK_TYPES = frozenset(
    [
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "counting",
        "ranking",
        "aggregation-MAX",
        "aggregation-MIN",
        "aggregation-SUM",
        "aggregation-AVG",
        "aggregation-COUNT",
        "comparison",
        "other",
    ]
)
SHAPES = {
    **dict.fromkeys(MUTATIONS, "hash"),
    **dict.fromkeys(("counting", "aggregation-COUNT"), "scalar_int"),
    **dict.fromkeys(("aggregation-SUM", "aggregation-AVG"), "scalar_float"),
    **dict.fromkeys(("aggregation-MAX", "aggregation-MIN", "ranking", "comparison"), "scalar_str"),
    "SELECT": "multi_row_multi_col",
}
ERROR_KINDS = frozenset({"syntax", "unknown_col", "unknown_table", "timeout"})
_SCHEMA = re.compile(r"^\s*(describe|desc|show\s+tables|show\s+columns|explain)\b", re.IGNORECASE)
_DESCRIBE = re.compile(r"^\s*(?:describe|desc)\s+(?:`([^`]+)`|([^;\s]+))", re.IGNORECASE)


def normalise_sql(sql: str) -> str:
    return " ".join(sql.strip().rstrip(";").split()).lower()


def classify(text: str, error_kind: str | None = None) -> str:
    """The official ``last_error_kind`` of a response (SQLite error kinds mapped onto MySQL's)."""
    low, bare = text.lower(), text.strip()
    failed = error_kind not in (None, "", "none")
    if not bare and not failed:
        return "empty"
    if error_kind == "timeout" or "timed out" in low:
        return "timeout"
    if error_kind == "no_such_column" or "unknown column" in low:
        return "unknown_col"
    if error_kind == "no_such_table" or "doesn't exist" in low:
        return "unknown_table"
    if failed or "error" in low:
        return "syntax"
    if bare.lower() in ("[(none,)]", "[(null,)]"):
        return "null_agg"
    if bare in ("[]", "()"):
        return "empty"
    return "ok"


def _rows(text: str) -> list[Any] | None:
    if not text.startswith("[") or len(text) > 20_000:
        return None
    try:
        rows = ast.literal_eval(text)  # a printed list of tuples; literals only, never code
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return rows if isinstance(rows, list) else None


class DBAdapter(R1Adapter):
    """DBBench's ctx and firing rules (see the module docstring)."""

    benchmark = "dbbench"

    def __init__(self, env: TextEnvLike, max_steps: int) -> None:
        super().__init__(env, max_steps)
        fields = env.task_fields()
        raw_type = str(fields.get("task_type") or "other")
        task_type = raw_type if raw_type in TASK_TYPES else "other"
        table = " ".join(str(fields.get("target_table") or "").split())[:64] or None
        self.task = {
            "task_type": task_type,
            "answer_shape": SHAPES.get(task_type),
            "target_table": table,
            "description": str(fields.get("description") or fields.get("instruction") or ""),
        }
        self.history: list[str] = []
        self.history_raw: list[str] = []
        self.columns: dict[str, list[str]] = {}
        self.state: dict[str, Any] = {
            "sql_count": 0,
            "last_sql": "",
            "last_result": "",
            "last_error_kind": "",
            "last_error_text": "",
            "last_result_was_error": False,
            "error_streak": 0,
            "empty_streak": 0,
            "text_only_streak": 0,
            "loop_streak": 0,
            "mutation_attempted": False,
            "candidate_answer": None,
            "candidate_answer_shape": None,
            "candidate_implausible": False,
        }

    @staticmethod
    def tool(action: str | None) -> str:
        return _tool_of(protocol.parse_action(action or ""))

    def fires(self, hook: str, action: str | None) -> bool:
        if hook == "on_before_action":
            return bool(self.tool(action))
        if hook == "on_post_step":
            return self.tool(action) == "execute_sql"
        return True

    def no_action(self, shown: str) -> None:
        self.state["text_only_streak"] += 1

    def acted(self, action: str) -> None:
        if self.tool(action):  # a turn with a tool call resets the streak (upstream, even if it is blocked)
            self.state["text_only_streak"] = 0

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        super().executed(action, observation, info)
        parsed = protocol.parse_action(action)
        if parsed.kind != "sql":
            if parsed.kind == "invalid":
                self.state["text_only_streak"] += 1  # upstream: a turn without a (rescued) tool call
            return
        s, sql = self.state, parsed.sql
        normal = normalise_sql(sql)
        s["loop_streak"] = s["loop_streak"] + 1 if self.history and self.history[-1] == normal else 0
        self.history.append(normal)
        self.history_raw.append(sql)
        kind = classify(observation, info.get("error_kind"))
        error = kind in ERROR_KINDS
        s.update(sql_count=len(self.history), last_sql=sql, last_result=observation, last_error_kind=kind)
        s["last_error_text"] = observation if error else ""
        s["last_result_was_error"] = error
        s["error_streak"] = s["error_streak"] + 1 if error else 0
        s["empty_streak"] = s["empty_streak"] + 1 if kind == "empty" else 0
        rows = _rows(observation)
        described = _DESCRIBE.match(sql)
        if described and rows is not None:
            self.columns[described.group(1) or described.group(2)] = [
                str(r[0]) for r in rows if isinstance(r, tuple | list) and r
            ]
        task_type, table = self.task["task_type"], (self.task["target_table"] or "").lower()
        if task_type in MUTATIONS and not error:
            verb = re.search(rf"\b{task_type.lower()}\b", sql.lower())
            if verb and table and table in sql.lower():
                s["mutation_attempted"] = True
        if not error and kind != "empty" and not _SCHEMA.match(sql) and task_type not in MUTATIONS:
            self._candidate(observation, rows, kind)

    def _candidate(self, text: str, rows: list[Any] | None, kind: str) -> None:
        shape, s = self.task["answer_shape"], self.state
        if kind == "null_agg":
            value: Any = "0"
        elif shape == "multi_row_multi_col":
            value = text
        elif rows:
            first = rows[0]
            value = str(first[0]) if isinstance(first, tuple | list) and first else str(first)
        else:
            value = text
        scalar = shape is not None and shape.startswith("scalar")
        s.update(candidate_answer=value, candidate_answer_shape=shape)
        s["candidate_implausible"] = bool(
            scalar and (kind == "null_agg" or (rows is not None and len(rows) > 1))
        )

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        tool, query, answers = "", "", []
        if hook in ("on_before_action", "on_post_step") and proposal is not None:
            parsed = protocol.parse_action(proposal.final or proposal.action)  # parsed once per call
            tool = _tool_of(parsed)
            if tool == "execute_sql":
                query = parsed.sql
            elif tool == "commit_final_answer":
                given = proposal.arguments.get("answers", answer_value(parsed.answer_raw))
                answers = list(given) if isinstance(given, list) else [str(given)]
        remaining = self.remaining(hook, step)
        state = dict(self.state, remaining_rounds=remaining)
        kind = state["last_error_kind"]
        return {
            "action": {
                "tool": tool,
                "query": query,
                "answers": answers,
                "h2_action": None,
                "h2_blocked_reason": "",
                "commit_gate_action": None,
                "commit_gate_reason": "",
            },
            "state": state,
            "task": dict(self.task),
            "dbbench": {
                "sql_history": list(self.history),
                "sql_history_raw": list(self.history_raw),
                "discovered_columns": {k: list(v) for k, v in self.columns.items()},
                "db_response": self.observation if hook == "on_post_step" else "",
                "round": 0 if hook == "on_init" else step + 1,
            },
            "predicates": {
                "execute_sql": tool == "execute_sql",
                "commit_final_answer": tool == "commit_final_answer",
                "no_sql_yet": not self.history,
                "commit_before_sql": tool == "commit_final_answer" and not self.history,
                "commit_empty_answer": tool == "commit_final_answer" and not answers,
                "mutation_task": self.task["task_type"] in MUTATIONS,
                "mutation_not_attempted": self.task["task_type"] in MUTATIONS
                and not state["mutation_attempted"],
                "last_result_error": state["last_result_was_error"],
                "last_result_empty": kind == "empty",
                "unknown_column_error": kind == "unknown_col",
                "syntax_error": kind == "syntax",
                "repeated_sql": (len(self.history) >= 2 and self.history[-1] == self.history[-2])
                or state["loop_streak"] > 0,
                "candidate_answer_available": state["candidate_answer"] is not None,
                "remaining_rounds_low": remaining <= 3,
                "text_only_loop": state["text_only_streak"] >= 2,
            },
        }


def _tool_of(parsed: Any) -> str:
    """The official tool name of a parsed DBBench action ("" for a reply that is neither)."""
    return {"sql": "execute_sql", "answer": "commit_final_answer"}.get(parsed.kind, "")
