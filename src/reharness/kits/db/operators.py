"""DB operators: SQL errors → schema hints, empty results → matching hints, premature-answer guard.

DBBench honours only blocks before an action and hints after feedback (REFERENCE.md §1), so these operators
never rewrite SQL or force a commit. They read ``state`` (``last_error_kind``, ``error_streak``,
``empty_streak``, ``sql_count``), ``discovered_columns``, ``sql_history`` and ``task`` (``target_table``,
``answer_shape``); the optional ``on_init`` part reads the table's header line from the first observation
(AgentBench's "the headers of this table are ..." sentence), which every task states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill
from reharness.kits.db import intent as intent_rules

HEADERS = """
def remember_headers(ctx, nb):
    text = str(ctx.get("observation") or "")
    marker = "the headers of this table are "
    if marker in text:
        line = text.split(marker, 1)[1].split("\\n")[0].strip()
        if line.endswith("."):
            line = line[:-1]
        nb["columns"] = [c.strip() for c in line.split(",") if c.strip()]
    return None
"""
SCHEMA = """
def sql_error_hint(ctx, nb):
    state = ctx.get("state") or {}
    kind = str(state.get("last_error_kind") or "none")
    if kind == "none" or (state.get("error_streak") or 0) < <<streak>>:
        return None
    advice = {
        "no_such_column": "A column name is wrong: use only the exact column names below.",
        "no_such_table": "The table name is wrong: use exactly the table named below.",
        "syntax_error": "The statement does not parse: write one statement on one line, quote text values "
        "with single quotes and names with backticks.",
    }
    task = ctx.get("task") or {}
    table = str(task.get("target_table") or "")
    columns = [str(c) for c in (nb.get("columns") or ctx.get("discovered_columns") or [])]
    message = "The last SQL statement failed (" + kind.replace("_", " ") + "). "
    message += advice.get(kind, "Read the error message and fix the statement.")
    if table:
        message += " The table is `" + table + "`; quote it with backticks."
    if columns:
        message += " Known columns: " + ", ".join("`" + c + "`" for c in columns[:40]) + "."
    else:
        message += " Run SHOW COLUMNS FROM the table to see its columns."
<<SIMPLIFY>>    return {"type": "inject_hint", "message": message[:900]}
"""
SCHEMA_SIMPLIFY = """    if (state.get("error_streak") or 0) >= 2:
        message = "Several statements failed in a row; start again from a simple SELECT. " + message
"""


class SqlErrorHint(Operator):
    name = "sql_error_hint"
    summary = "After an SQL error, explain the error kind and list the table and its columns from ctx"
    codes = ("sql_error", "tool_error")
    envs = ("db",)
    signals = ("sql_errors",)
    priority = 40
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"streak": (1, 4)}

    def space(self, env: str) -> ParamSpace:
        return {"streak": (1, 2), "headers": (True, False), "simplify": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        simplify = SCHEMA_SIMPLIFY if params["simplify"] else ""
        code = fill(SCHEMA, {"SIMPLIFY": simplify}, streak=params["streak"])
        out = {"after_feedback": Fragment("sql_error_hint", code)}
        if params["headers"]:
            out["on_init"] = Fragment("remember_headers", HEADERS)
        return out


EMPTY = """
def empty_result_hint(ctx, nb):
    state = ctx.get("state") or {}
    if (state.get("empty_streak") or 0) < <<streak>>:
        return None
    message = "The query returned no rows, so its condition matches nothing. All columns hold text: compare "
    message += "with quoted strings and check the exact spelling and case of the values"
<<LIKE>>    message += ". Do not answer from an empty result unless the question really expects none."
    return {"type": "inject_hint", "message": message}
"""
EMPTY_LIKE = """    message += " (see the stored values with SELECT DISTINCT on the column, or use LIKE)"
"""


class EmptyResultHint(Operator):
    name = "empty_result_hint"
    summary = "After a query returns no rows, suggest checking how values are stored before answering"
    codes = ("wrong_answer", "no_progress")
    envs = ("db",)
    signals = ("empty_results",)
    priority = 45
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"streak": (1, 4)}

    def space(self, env: str) -> ParamSpace:
        return {"streak": (1, 2), "like": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(EMPTY, {"LIKE": EMPTY_LIKE if params["like"] else ""}, streak=params["streak"])
        return {"after_feedback": Fragment("empty_result_hint", code)}


ANSWER = """
def answer_guard(ctx, nb):
    state = ctx.get("state") or {}
    count = int(state.get("sql_count") or 0)
    if count > nb.get("sql_seen", 0):
        if str(state.get("last_error_kind") or "none") == "none":
            nb["sql_ok"] = nb.get("sql_ok", 0) + 1
        nb["sql_seen"] = count
    action = ctx.get("action") or {}
    text = str(action.get("text") or "").lower()
    if "final answer" not in text or "action: operation" in text:
        return None
    problem = None
    if nb.get("sql_ok", 0) < <<min_ok>>:
        problem = "no SQL query has succeeded yet, so the answer cannot come from the table. Query it first."
<<AFTER_ERROR>><<MUTATION>>    if problem is None:
        return None
    blocks = nb.get("answer_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["answer_blocks"] = blocks + 1
    return {"type": "block_and_prompt", "message": "Not answering yet: " + problem}
"""
ANSWER_AFTER_ERROR = """    failed = str(state.get("last_error_kind") or "none") != "none"
    if problem is None and count and failed:
        problem = "the last SQL statement failed, so there is no result to answer from. Fix it and run it."
"""
ANSWER_MUTATION = """    task = ctx.get("task") or {}
    changes = ("insert", "update", "delete")
    history = [str(s).strip().lower() for s in (ctx.get("sql_history") or [])]
    if task.get("answer_shape") == "mutation" and not any(s.startswith(changes) for s in history):
        problem = "the task asks to change the table, but no INSERT, UPDATE or DELETE has run. Run it first."
"""


class AnswerGuard(Operator):
    name = "answer_guard"
    summary = (
        "Block the final answer before any SQL query succeeded, right after a failed statement, or "
        "(mutations) before any change"
    )
    codes = ("premature_answer", "wrong_answer")
    envs = ("db",)
    priority = 10
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"min_ok": (1, 3), "max_blocks": (1, 5)}

    def space(self, env: str) -> ParamSpace:
        return {
            "min_ok": (1, 2),
            "after_error": (True, False),
            "mutation": (True, False),
            "max_blocks": (2, 1, 3),
        }

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(
            ANSWER,
            {
                "MUTATION": ANSWER_MUTATION if params["mutation"] else "",
                "AFTER_ERROR": ANSWER_AFTER_ERROR if params["after_error"] else "",
            },
            min_ok=params["min_ok"],
            max_blocks=params["max_blocks"],
        )
        return {"before_action": Fragment("answer_guard", code)}


GROUND = """
def answer_grounding(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "")
    marker = "Final Answer:"
    if marker not in text or "action: operation" in text.lower():
        return None
    task = ctx.get("task") or {}
    state = ctx.get("state") or {}
    values = [str(v) for v in (state.get("candidate_answer") or [])]
    fresh = str(state.get("last_error_kind") or "none") == "none" and not state.get("empty_streak")
    if task.get("answer_shape") == "mutation" or not values or not fresh or len(values) > <<max_values>>:
        return None
    given = text.split(marker, 1)[1]
    if all(json.dumps(v, ensure_ascii=False) in given for v in values):
        return None
    blocks = nb.get("ground_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["ground_blocks"] = blocks + 1
    answer = "Action: Answer\\nFinal Answer: " + json.dumps(values, ensure_ascii=False)
    return {"type": "block_and_prompt", "message": <<lead>> + answer}
"""
GROUND_LEADS = (
    "Not valid: the answer does not quote the last query's result. Try: ",
    "Blocked: that answer is not what the last query returned. Do this: ",
)


class AnswerGrounding(Operator):
    name = "answer_grounding"
    summary = (
        "Block a final answer that does not quote the last successful query's result and offer that result"
    )
    codes = ("wrong_answer",)
    envs = ("db",)
    priority = 15
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"max_values": (1, 20), "max_blocks": (1, 4)}

    def space(self, env: str) -> ParamSpace:
        return {"max_values": (3, 1, 10), "max_blocks": (1, 2), "lead": (0, 1)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(
            GROUND,
            lead=GROUND_LEADS[params["lead"]],
            max_values=params["max_values"],
            max_blocks=params["max_blocks"],
        )
        return {"before_action": Fragment("answer_grounding", code, ("json",))}


GUARD = """
def sql_guard(ctx, nb):
    action = ctx.get("action") or {}
    text = str(action.get("text") or "")
    if "```sql" not in text:
        return None
    sql = text.split("```sql", 1)[1].split("```")[0].strip()
    low = " ".join(sql.lower().split())
    problem = None
    if low.count(" where ") > 1 or low.count(" from ") > 1 or low.count(" values ") > 1:
        problem = "a clause is written twice"
    elif low.startswith("insert"):
        found = re.search(r"\\((.*?)\\)\\s*values\\s*\\((.*)\\)\\s*;?$", sql, re.I | re.S)
        if found:
            names = len(re.findall(r"`[^`]+`", found.group(1))) or found.group(1).count(",") + 1
            values = re.sub(r"'(?:[^']|'')*'", "''", found.group(2)).count(",") + 1
            if names != values:
                problem = str(values) + " values for " + str(names) + " columns"
    elif low.startswith("update") and " set " not in low:
        problem = "an UPDATE needs SET `column` = 'value' before WHERE"
<<INTENT>>    if problem is None:
        return None
    blocks = nb.get("sql_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["sql_blocks"] = blocks + 1
    message = <<lead>> + problem + "."
<<LIST>>    return {"type": "block_and_prompt", "message": message[:900]}
"""
GUARD_INTENT = r"""    asked = str((ctx.get("task") or {}).get("instruction") or "").lower()
    said = {name: re.search(pattern, asked) is not None for name, pattern in <<words>>.items()}
    for wanted, other, marker, text in <<rules>>:
        if problem is None and said[wanted] and not said[other] and marker in low:
            problem = text
    found = re.search(<<filter_column>>, " ".join(sql.split()), re.I)
    if problem is None and found and found.group(1).lower() == found.group(2).lower():
        problem = <<filter_problem>>.replace("{name}", found.group(1))
"""
GUARD_LIST = """    if nb.get("columns"):
        message += " Known columns: " + ", ".join("`" + str(c) + "`" for c in nb["columns"][:40]) + "."
"""
GUARD_LEADS = ("Blocked: ", "That statement would fail: ")


class SqlGuard(Operator):
    name = "sql_guard"
    summary = (
        "Block an SQL statement with a visible defect (values vs. columns, UPDATE without SET, a clause "
        "written twice, an aggregate, order or returned column the question contradicts) before it runs"
    )
    codes = ("sql_error", "format_error")
    envs = ("db",)
    signals = ("sql_errors",)
    priority = 5
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"max_blocks": (1, 5)}

    def space(self, env: str) -> ParamSpace:
        return {
            "intent": (True, False),
            "list": (False, True),
            "max_blocks": (2, 1, 3),
            "lead": (0, 1),
        }

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        intent = fill(
            GUARD_INTENT,
            words=intent_rules.WORDS,
            rules=intent_rules.RULES,
            filter_column=intent_rules.FILTER_COLUMN,
            filter_problem=intent_rules.FILTER_PROBLEM,
        )
        code = fill(
            GUARD,
            {"INTENT": intent if params["intent"] else "", "LIST": GUARD_LIST if params["list"] else ""},
            lead=GUARD_LEADS[params["lead"]],
            max_blocks=params["max_blocks"],
        )
        out = {"before_action": Fragment("sql_guard", code, ("re",))}
        if params["list"]:
            out["on_init"] = Fragment("remember_headers", HEADERS)
        return out
