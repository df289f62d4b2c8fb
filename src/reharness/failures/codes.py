"""The failure-code taxonomy: stable names for why an episode failed.

The string values are a **contract**: they are stored in ``EpisodeRecord.failure_codes``, printed by
``reharness show``, carried by failure packets, read by repair operators and behaviour profiles and matched by
scripts. Add codes; never rename or repurpose one. The precise rule behind each code (thresholds, per-env
meaning) lives in :mod:`reharness.failures.detectors`; the one-line descriptions here are what users see.
"""

from __future__ import annotations

from enum import StrEnum


class FailureCode(StrEnum):
    """Why an episode failed. ``str(code)`` is the stable value (``"invalid_action"``)."""

    INVALID_ACTION = "invalid_action"
    FORMAT_ERROR = "format_error"
    TOOL_ERROR = "tool_error"
    REPEATED_ACTION = "repeated_action"
    NO_PROGRESS = "no_progress"
    SQL_ERROR = "sql_error"
    PREMATURE_ANSWER = "premature_answer"
    WRONG_ANSWER = "wrong_answer"
    STEP_LIMIT = "step_limit"
    HOOK_ERROR = "hook_error"
    POLICY_ERROR = "policy_error"
    ENV_ERROR = "env_error"
    EDIT_ERROR = "edit_error"
    TESTS_FAILING = "tests_failing"
    API_ERROR = "api_error"
    AUTH_ERROR = "auth_error"
    CODE_ERROR = "code_error"
    COLLATERAL_DAMAGE = "collateral_damage"

    @property
    def description(self) -> str:
        """One line saying what the code means."""
        return DESCRIPTIONS[self]


DESCRIPTIONS: dict[FailureCode, str] = {
    FailureCode.INVALID_ACTION: "the environment rejected an action as not admissible "
    "(e.g. 'Nothing happens.')",
    FailureCode.FORMAT_ERROR: "a reply could not be read as an action (no 'Action:' line, no tool call, "
    "malformed DBBench text)",
    FailureCode.TOOL_ERROR: "a tool call named an unknown tool or passed bad arguments",
    FailureCode.REPEATED_ACTION: "the same action was executed 3 or more times in a row",
    FailureCode.NO_PROGRESS: "5 or more consecutive steps brought no observation not seen before",
    FailureCode.SQL_ERROR: "an SQL statement failed (syntax error, unknown table or column, ...)",
    FailureCode.PREMATURE_ANSWER: "the agent ended the task before gathering what it needs (purchase with a "
    "required option unselected; answer or commit without a useful query)",
    FailureCode.WRONG_ANSWER: "the agent ended the task itself with a score below 1 (wrong answer, imperfect "
    "purchase)",
    FailureCode.STEP_LIMIT: "the episode ran out of steps before the task was done",
    FailureCode.HOOK_ERROR: "a harness hook raised, timed out or returned an invalid effect",
    FailureCode.POLICY_ERROR: "the policy (model call) failed and the episode stopped",
    FailureCode.ENV_ERROR: "the environment raised and the episode stopped",
    FailureCode.EDIT_ERROR: "a file edit failed (old text not found or not unique, bad path or line number)",
    FailureCode.TESTS_FAILING: "the submitted change left tests failing (a FAIL_TO_PASS test still fails "
    "or a PASS_TO_PASS test broke)",
    FailureCode.API_ERROR: "an app API call was misused: unknown app, API or resource (404), invalid or "
    "missing arguments (422), a conflicting change (409)",
    FailureCode.AUTH_ERROR: "an app API call was rejected as not authenticated (401: no or wrong access "
    "token, wrong password)",
    FailureCode.CODE_ERROR: "the agent's code raised an exception other than an API error, or ran past its "
    "time limit",
    FailureCode.COLLATERAL_DAMAGE: "the agent changed data the task did not ask to change (a "
    "no-collateral-damage test failed)",
}

#: Every code, in declaration order (the order tables and packets use).
ALL_CODES: tuple[FailureCode, ...] = tuple(FailureCode)


def parse_code(value: str) -> FailureCode:
    """The code named ``value``; raises :class:`~reharness.core.errors.UnknownNameError` for unknown names."""
    try:
        return FailureCode(value)
    except ValueError:
        from reharness.core.errors import UnknownNameError, did_you_mean

        raise UnknownNameError(
            f"unknown failure code {value!r}", hint=did_you_mean(value, [c.value for c in ALL_CODES])
        ) from None
