"""AppWorld-style grading: tests over the database diff between the start and the end of an episode.

A task's gold holds the expected ``answer`` (or ``None``) and the expected ``changes``; each change is
``{"op": "insert", "table", "match": {col: value}}``, ``{"op": "update", "table", "id", "set": {col:
value}}`` or ``{"op": "delete", "table", "id"}``. The tests are: the answer matches (when the task asks a
question), every expected change happened, and **no collateral damage** — every row that changed is explained
by an expected change (an update may change only the columns it names). The task passes (TGC) iff every test
passes and the agent completed it with ``status="success"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

Snapshot = dict[str, dict[int, dict[str, Any]]]


@dataclass(frozen=True)
class TestResult:
    name: str
    passed: bool
    detail: str = ""


def _norm(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, str):
        return value.strip()
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(float(a) - float(b)) < 0.005
    return _norm(a) == _norm(b)


def normalise_answer(value: Any) -> str:
    """Answers compare as text: case, surrounding space/quotes and a trailing '.0' or '$' do not matter."""
    text = str(value).strip().strip("'\"").strip().lower().lstrip("$")
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        return re.sub(r"\s+", " ", text)
    return f"{number:.2f}"


def diff(before: Snapshot, after: Snapshot) -> dict[str, list[tuple[str, Any, Any]]]:
    """``{table: [(kind, before_row, after_row), ...]}`` for inserted, deleted and updated rows."""
    out: dict[str, list[tuple[str, Any, Any]]] = {}
    for table, old in before.items():
        new = after.get(table, {})
        rows: list[tuple[str, Any, Any]] = [("insert", None, new[i]) for i in sorted(set(new) - set(old))]
        rows += [("delete", old[i], None) for i in sorted(set(old) - set(new))]
        rows += [("update", old[i], new[i]) for i in sorted(set(old) & set(new)) if old[i] != new[i]]
        if rows:
            out[table] = rows
    return out


def grade(
    gold: dict[str, Any], before: Snapshot, after: Snapshot, completion: dict[str, Any] | None
) -> list[TestResult]:
    """Every test of the task (see module docstring)."""
    tests: list[TestResult] = []
    status = (completion or {}).get("status")
    tests.append(
        TestResult(
            "completed",
            status == "success",
            f"complete_task status: {status!r}" if status else "not completed",
        )
    )
    expected_answer = gold.get("answer")
    if expected_answer is not None:
        given = (completion or {}).get("answer")
        ok = given is not None and normalise_answer(given) == normalise_answer(expected_answer)
        tests.append(TestResult("answer", ok, "" if ok else f"the answer {given!r} is not correct"))
    changes = diff(before, after)
    pending = {t: list(rows) for t, rows in changes.items()}
    for i, change in enumerate(gold.get("changes") or []):
        table = change["table"]
        hit = _find(change, pending.get(table, []))
        label = f"change {i + 1}: {change['op']} in {table}"
        if hit is None:
            tests.append(TestResult(label, False, "expected change not found"))
        else:
            pending[table].remove(hit)
            tests.append(TestResult(label, True))
    extra = {t: rows for t, rows in pending.items() if rows}
    what = ", ".join(f"{t}: {', '.join(k for k, _, _ in rows)}" for t, rows in extra.items())
    tests.append(
        TestResult("no_collateral_damage", not extra, f"unexpected changes ({what})" if extra else "")
    )
    return tests


def _find(change: dict[str, Any], rows: list[tuple[str, Any, Any]]) -> tuple[str, Any, Any] | None:
    op = change["op"]
    for row in rows:
        kind, old, new = row
        if kind != op:
            continue
        if op == "insert" and all(_same(new.get(k), v) for k, v in change["match"].items()):
            return row
        if op == "delete" and old["id"] == change["id"]:
            return row
        if op == "update" and old["id"] == change["id"]:
            wanted = change["set"]
            changed = {k for k in new if new[k] != old[k]}
            if all(_same(new.get(k), v) for k, v in wanted.items()) and changed <= set(wanted):
                return row
    return None


def report(tests: list[TestResult]) -> str:
    """The evaluation report shown when the episode ends (test names are stable: detectors read them)."""
    passed = sum(t.passed for t in tests)
    lines = [f"Evaluation: {passed} of {len(tests)} tests passed."]
    lines += [f"FAILED {t.name}: {t.detail}" for t in tests if not t.passed]
    return "\n".join(lines)
