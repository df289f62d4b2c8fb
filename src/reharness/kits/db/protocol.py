"""DBBench's two agent protocols: the v0.2 text format and the function-calling tools.

The env's action is always the agent's raw text in the v0.2 format (AgentBench v0.2 ``DBBench.start_sample``):

* ``Action: Operation`` followed by a ```` ```sql ```` block: the first block is executed (newlines become
  spaces, as AgentBench does);
* otherwise a line ``Final Answer: [...]`` commits the answer (``Action: Answer`` precedes it by convention).

Tool calls (``execute_sql(query)``, ``commit_final_answer(answers)``, AgentBench main) are mapped onto that
text and back. The prompts are AgentBench's instructions for each protocol, the question and the table line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]  # linear-time: agent text cannot backtrack

from reharness.kits.db.grading import answer_value

PROTOCOLS = ("v0.2", "fc")
MAX_STEPS = {"v0.2": 20, "fc": 15}
OBSERVATION_LIMIT = 800

V02_INSTRUCTIONS = """I will ask you a question, then you should help me operate a MySQL database with SQL to answer the question.
You have to explain the problem and your solution to me and write down your thoughts.
After thinking and explaining thoroughly, every round you can choose to operate or to answer.
your operation should be like this:
Action: Operation
```sql
SELECT * FROM table WHERE condition;
```
You MUST put SQL in markdown format without any other comments. Your SQL should be in one line.
Every time you can only execute one SQL statement. I will only execute the statement in the first SQL code block. Every time you write a SQL, I will execute it for you and give you the output.
If you are done operating, and you want to commit your final answer, then write down:
Action: Answer
Final Answer: ["ANSWER1", "ANSWER2", ...]
DO NOT write this pattern unless you are sure about your answer. I expect an accurate and correct answer.
Your answer should be accurate. Your answer must be exactly the same as the correct answer.
If the question is about modifying the database, then after done operation, your answer field can be anything.
If your response cannot match any pattern I mentioned earlier, you will be judged as FAIL immediately.
Your input will be raw MySQL response, you have to deal with it by yourself."""  # noqa: E501

FC_INSTRUCTIONS = """I will ask you a question, then you should help me operate a MySQL database with SQL to answer the question.
You have to explain the problem and your solution to me and write down your thoughts.
After thinking and explaining thoroughly, every round you can choose to operate or to answer with the two specific tools provided.
If you should execute a SQL query, use the `execute_sql` function, Your SQL should be in one line.
Every time you can only execute one SQL statement. I will only execute the statement in the first SQL code block. Every time you write a SQL, I will execute it for you and give you the output.
If you are done operating, and you want to commit your final answer, then use the `commit_final_answer` function.
DO NOT use this tool unless you are sure about your answer. I expect an accurate and correct answer.
Your answer should be accurate. Your answer must be exactly the same as the correct answer.
If the question is about modifying the database, then after done operation, your answer field can be anything.
If your response cannot match any pattern I mentioned earlier, you will be judged as FAIL immediately.
You should always use the tools provided to submit your answer. Be careful not to write it in the content field.
Your input will be raw MySQL response, you have to deal with it by yourself."""  # noqa: E501

FORMAT_ERROR = (
    "Invalid action format. Reply with one of:\n"
    "Action: Operation\n```sql\nSELECT * FROM table WHERE condition;\n```\n"
    "or\n"
    'Action: Answer\nFinal Answer: ["ANSWER1", "ANSWER2", ...]'
)
FC_FORMAT_ERROR = (
    "Invalid action: no tool call found. Call execute_sql(query) to run one SQL statement, or "
    "commit_final_answer(answers) to submit the final answer."
)
MISSING_SQL_ERROR = (
    "Invalid action format: 'Action: Operation' must be followed by one SQL statement in a block\n"
    "```sql\nSELECT * FROM table WHERE condition;\n```"
)

# RE2 (linear time) with the same leftmost-first semantics as ``re``: Python's engine takes quadratic time on
# replies such as 'Action: ' * 20000 (25 s), and the reply is the agent's, so it may be hostile.
_ACTION = re2.compile(r"Action: (.*?)\n")
_SQL_BLOCK = re2.compile(r"```sql\n([\s\S]*?)\n```")
_FINAL = re2.compile(r"(?:^|\n)Final Answer:(.*)")


@dataclass(frozen=True)
class ParsedAction:
    """``kind`` is ``sql``, ``answer`` or ``invalid``; ``error`` says why an action is invalid."""

    kind: str
    sql: str = ""
    answer_raw: str = ""
    error: str = ""


def parse_action(text: str) -> ParsedAction:
    """Parse the agent's raw text the way AgentBench v0.2 does (format errors become ``invalid``)."""
    action = _ACTION.search(text)
    if action and action.group(1).strip() == "Operation":
        block = _SQL_BLOCK.search(text)
        if not block:
            return ParsedAction("invalid", error=MISSING_SQL_ERROR)
        sql = block.group(1).strip().replace("\n", " ")
        if not sql:
            return ParsedAction("invalid", error=MISSING_SQL_ERROR)
        return ParsedAction("sql", sql=sql)
    final = _FINAL.search(text)
    if final:
        return ParsedAction("answer", answer_raw=final.group(1))
    return ParsedAction("invalid", error=FORMAT_ERROR)


def format_sql(sql: str) -> str:
    """The canonical v0.2 text of an SQL operation."""
    return f"Action: Operation\n```sql\n{sql}\n```"


def format_answer(answers: list[Any] | str) -> str:
    """The canonical v0.2 text of a final answer (a JSON list, readable as a Python literal)."""
    body = answers if isinstance(answers, str) else json.dumps([str(a) for a in answers], ensure_ascii=False)
    return f"Action: Answer\nFinal Answer: {body}"


def truncate(text: str, limit: int = OBSERVATION_LIMIT) -> str:
    """AgentBench's result truncation: the first ``limit`` characters plus ``[TRUNCATED]``."""
    return text if len(text) <= limit else text[:limit] + "[TRUNCATED]"


def table_line(table: str, columns: list[str]) -> str:
    """AgentBench's ``add_description`` for one table."""
    return f"The name of this table is {table}, and the headers of this table are {','.join(columns)}."


def task_prompt(protocol: str, description: str, add_description: str) -> str:
    """The first observation: the protocol's instructions followed by the question and the table line."""
    if protocol == "fc":
        question = ""
        if add_description:
            question += "Additional table information about the question: " + add_description + "\n"
        question += "Question: " + description
        return FC_INSTRUCTIONS + "\n\n" + question
    return V02_INSTRUCTIONS + "\n\n" + description + "\n" + add_description


# ---------------------------------------------------------------------------------------------- tools
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "execute_sql",
            "description": "Execute one MySQL statement on the task's database; returns the raw result rows.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "one SQL statement, in one line"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "commit_final_answer",
            "description": (
                "Commit the final answer and end the task. For questions give every answer value as a "
                "string; for INSERT/UPDATE tasks the answers can be anything (the table is checked)."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "answers": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the answer values",
                    }
                },
                "required": ["answers"],
                "additionalProperties": False,
            },
        },
    },
]


def action_from_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """Map a tool call onto the canonical v0.2 text (``ValueError`` when malformed)."""
    if not isinstance(arguments, Mapping):
        raise ValueError(f"tool arguments must be an object, got {type(arguments).__name__}")
    if name == "execute_sql":
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("execute_sql needs a non-empty string argument 'query'")
        return format_sql(query.strip())
    if name == "commit_final_answer":
        if "answers" not in arguments:
            raise ValueError("commit_final_answer needs an argument 'answers' (an array of strings)")
        answers = arguments["answers"]
        if isinstance(answers, str):
            return format_answer(answers.replace("\n", " "))
        if not isinstance(answers, list):
            raise ValueError(f"'answers' must be an array of strings, got {type(answers).__name__}")
        return format_answer([a if isinstance(a, str) else json.dumps(a) for a in answers])
    raise ValueError(f"db has no tool {name!r} (tools: execute_sql, commit_final_answer)")


def tool_call_from_action(action: str) -> tuple[str, dict[str, Any]]:
    """Inverse of :func:`action_from_tool_call` (``ValueError`` for text that is not a valid action)."""
    parsed = parse_action(action)
    if parsed.kind == "sql":
        return "execute_sql", {"query": parsed.sql}
    if parsed.kind == "answer":
        value = answer_value(parsed.answer_raw)
        answers = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return "commit_final_answer", {"answers": answers}
    raise ValueError(f"not a db action: {action[:80]!r} ({parsed.error.splitlines()[0]})")
