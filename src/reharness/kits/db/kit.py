"""The ``db`` kit: DBBench on SQLite (Harness-R1's ``dbbench``); ``--data`` loads AgentBench's task files."""

from typing import Any

from reharness.envs.kit import EnvKit
from reharness.kits.db import failures
from reharness.kits.db.operators import (
    AnswerGrounding,
    AnswerGuard,
    EmptyResultHint,
    SqlErrorHint,
    SqlGuard,
)
from reharness.kits.db.r1 import DBAdapter
from reharness.kits.db.tiny import TINY

#: The generic operators that read db's ``ctx``, and how they are tuned to it.
GENERIC_OPERATORS = ("loop_breaker", "goal_reminder", "format_reminder", "step_warning")
OPERATOR_SETTINGS: dict[str, dict[str, Any]] = {
    "loop_breaker": {
        "modes": ("block", "hint"),
        "advice": "Do something different: inspect the table, change or relax the condition, or give your "
        "final answer if you already have it.",
    },
    "goal_reminder": {"progress": ("state.sql_count", "state.last_error_kind", "state.candidate_answer")},
    # the text protocol hands malformed replies to the env, which flags them invalid
    "format_reminder": {
        "message": "Your last reply did not follow the required format. Either write 'Action: Operation' and "
        "then one SQL statement in one line inside a sql code block, or write 'Action: Answer' and then the "
        "line 'Final Answer: [\"value\"]'.",
        "count_invalid": True,
    },
    "step_warning": {"advice": "Give your final answer now if the last query answered the question."},
}


def load_data(path: str, options: dict[str, Any]) -> dict[str, Any]:
    """``--data FILE``: an AgentBench DBBench ``.jsonl`` task file."""
    return options | {"data_path": path}


KIT = EnvKit(
    name="db",
    env="reharness.kits.db.env:DBEnv",
    summary="DBBench on SQLite: generated tables or real AgentBench files; text or tool-call protocol",
    gym_id="reharness/DB-v0",
    harnesses={"base": "reharness.kits.db:harness.yaml", "fc": "reharness.kits.db:harness-fc.yaml"},
    detectors=(failures.detect,),
    signals=failures.signals,
    action_key=failures.action_key,
    mask_rules=failures.MASK_RULES,
    operators=(SqlErrorHint(), EmptyResultHint(), AnswerGuard(), AnswerGrounding(), SqlGuard()),
    generic_operators=GENERIC_OPERATORS,
    operator_settings=OPERATOR_SETTINGS,
    ctx_fields={
        "state.sql_count": "int",
        "state.error_streak": "int",
        "state.empty_streak": "int",
        "state.loop_streak": "int",
        "state.last_error_kind": "str",
        "task.answer_shape": "str",
    },
    data_loader=load_data,
    invalid_is_format=True,
    r1_adapter=DBAdapter,
    tiny=TINY,
)
