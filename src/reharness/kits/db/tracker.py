"""What hooks may see of a DBBench episode: Harness-R1's DBBench ``ctx`` fields, from observable events only.

``state`` {sql_count, last_sql, last_result, last_error_kind, error_streak, empty_streak, loop_streak,
candidate_answer}, ``sql_history``, ``discovered_columns`` and ``round`` (REFERENCE §1). Everything is derived
from the agent's own statements and the results it was shown; gold answers never enter here.
"""

from __future__ import annotations

import re
from typing import Any

from reharness.kits.db.protocol import truncate
from reharness.kits.db.sandbox import ExecResult

LAST_RESULT_CHARS = 300
MAX_CANDIDATE_VALUES = 10
_DESCRIBING = frozenset({"show_columns", "show_create"})


def _normalise(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").strip().lower()


class EpisodeTracker:
    """Counters and history of one episode (see module docstring)."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = list(columns)
        self._patterns = [
            (c, re.compile(r"(?<![\w])" + re.escape(c.lower()) + r"(?![\w])")) for c in self.columns
        ]
        self.sql_history: list[str] = []
        self.last_sql = ""
        self.last_result = ""
        self.last_error_kind = "none"
        self.error_streak = 0
        self.empty_streak = 0
        self.loop_streak = 0
        self.candidate_answer: list[str] | None = None
        self.discovered_columns: list[str] = []
        self.format_errors = 0
        self.answers: list[str] = []

    def ran(self, sql: str) -> int:
        """How many times ``sql`` (whitespace- and case-normalised) was executed."""
        target = _normalise(sql)
        return sum(1 for s in self.sql_history if _normalise(s) == target)

    def record_sql(self, sql: str, result: ExecResult) -> None:
        same = bool(self.sql_history) and _normalise(self.sql_history[-1]) == _normalise(sql)
        self.loop_streak = self.loop_streak + 1 if same else 0
        self.sql_history.append(sql)
        self.last_sql = sql
        self.last_result = truncate(result.text, LAST_RESULT_CHARS)
        if not result.ok:
            self.error_streak += 1
            self.empty_streak = 0
            self.last_error_kind = result.error_kind
            return
        self.error_streak = 0
        self.last_error_kind = "none"
        rows = result.rows or []
        is_query = bool(result.columns) or result.kind != "sql"
        self.empty_streak = self.empty_streak + 1 if is_query and not rows else 0
        values = [v for row in rows for v in row]
        if values and len(values) <= MAX_CANDIDATE_VALUES and result.kind == "sql":
            self.candidate_answer = [str(v) for v in values]
        if result.kind in _DESCRIBING:
            found = set(result.columns)
        else:
            low = sql.lower()
            found = {c for c, pattern in self._patterns if pattern.search(low)}
        for c in self.columns:
            if c in found and c not in self.discovered_columns:
                self.discovered_columns.append(c)

    def record_invalid(self) -> None:
        self.format_errors += 1

    def record_answer(self, raw: str) -> None:
        self.answers.append(raw.strip())

    def snapshot(self, round_: int) -> dict[str, Any]:
        return {
            "state": {
                "sql_count": len(self.sql_history),
                "last_sql": self.last_sql,
                "last_result": self.last_result,
                "last_error_kind": self.last_error_kind,
                "error_streak": self.error_streak,
                "empty_streak": self.empty_streak,
                "loop_streak": self.loop_streak,
                "candidate_answer": list(self.candidate_answer)
                if self.candidate_answer is not None
                else None,
                "format_errors": self.format_errors,
            },
            "sql_history": list(self.sql_history),
            "discovered_columns": list(self.discovered_columns),
            "round": round_,
        }
