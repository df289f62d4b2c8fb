"""Deterministic failure detectors: which failure codes a recorded episode shows, and on which steps.

A successful episode has no codes. For a failed one each rule below looks only at the trajectory (actions,
observations, step flags, hook errors, termination), so the codes can be recomputed from any stored run and
the same record always gives the same codes. Step indices are ``StepRecord.index`` values.

- ``invalid_action``: a step the environment flagged invalid (household "Nothing happens.", shop: not
  clickable or malformed). On ``db`` and ``code`` the env's only invalid actions are replies that do not
  follow its text format (v0.2; a command), so they count as ``format_error`` instead.
- ``format_error``: a reply the runtime could not parse into an action (no ``Action:`` line, empty reply, no
  tool call under the tools protocol), and db's malformed v0.2 replies.
- ``tool_error``: a tool call the runtime could not translate (unknown tool, missing or ill-typed arguments).
- ``repeated_action``: the same action executed :data:`REPEAT_RUN` (3) or more times in a row, counting
  executed actions only (a blocked or unparsed reply in between does not break the run). db compares the
  SQL statement (case and whitespace folded) or the answer, not the surrounding reasoning text.
- ``no_progress``: :data:`NO_PROGRESS_STEPS` (5) or more consecutive steps whose observation (or the harness
  message shown instead) had already been seen in the episode, counting the initial observation.
- ``sql_error``: a db step that executed an SQL statement whose result is an error message (a successful
  statement always shows a Python list of rows, ``[]`` included).
- ``premature_answer``: the episode was ended by the agent's own terminal action, with score < 1, before it
  gathered what the task needs. shop: ``click[buy now]`` while an option the instruction requires (``with
  color: black``) is not on the purchase receipt, i.e. was never selected. db: ``Final Answer`` when no
  earlier statement was useful: for INSERT/UPDATE/DELETE tasks no write statement succeeded, for questions
  no query returned a non-empty result. household has no terminal action (an episode ends on success or at
  the step limit), so the code never applies there, nor to envs it does not know.
- ``wrong_answer``: the episode was ended by the agent's own terminal action (the env reported
  ``terminated`` without success): a wrong db answer or commit, an imperfect shop purchase. A premature answer
  is also a wrong answer.
- ``edit_error``: a code step whose ``str_replace`` / ``insert`` was refused (observation ``Error: …``: old
  text not found or not unique, path outside the tree, line out of range).
- ``tests_failing``: a code episode ended by ``submit`` without being resolved (a ``FAIL_TO_PASS`` test still
  fails or a ``PASS_TO_PASS`` test broke). code's ``premature_answer``: submitted with no successful edit, or
  without running the tests after the last edit.
- ``step_limit``: the episode ran out of decisions (``termination == "step_limit"``).
- ``hook_error``: a step recorded hook errors (a hook raised, timed out or returned an invalid effect).
- ``policy_error`` / ``env_error``: the step flagged so; the episode stopped there.
- apps only (:mod:`.apps_evidence`): ``api_error`` — a step whose observation shows an API error 404, 409,
  422 or 429; ``auth_error`` — one that shows a 401; ``code_error`` — one whose code raised another
  exception (``NameError``, ``KeyError``, a time-out, ...); ``collateral_damage`` — the final evaluation
  report failed the no-collateral-damage test. A completed task that failed its tests is a ``wrong_answer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reharness.core.errors import DataError
from reharness.envs.registry import find_kit
from reharness.failures import apps_evidence
from reharness.failures.codes import FailureCode
from reharness.failures.evidence import (
    BAD_TOOL_CALL,
    action_key,
    code_command,
    code_edit,
    code_premature,
    db_action,
    executed,
    is_db_write,
    is_empty_result,
    is_purchase,
    is_sql_result,
    receipt_options,
    required_options,
    runs,
    stale_steps,
)
from reharness.store.records import EpisodeRecord, StepRecord

#: ``repeated_action`` needs the same action this many times in a row.
REPEAT_RUN = 3
#: ``no_progress`` needs this many consecutive steps without a new observation.
NO_PROGRESS_STEPS = 5
#: db task types graded by the table contents rather than by the answer.
DB_MUTATION_TYPES = frozenset({"INSERT", "UPDATE", "DELETE"})
#: Envs whose only invalid actions are replies outside their text format (counted as ``format_error``).
TEXT_FORMAT_ENVS = frozenset({"db", "code"})


@dataclass(frozen=True)
class Finding:
    """One failure code of an episode with its evidence: the step indices and a one-line explanation."""

    code: FailureCode
    steps: tuple[int, ...]
    detail: str


def detect(record: EpisodeRecord) -> list[FailureCode]:
    """The failure codes of ``record``: sorted by value, unique; empty for a successful episode."""
    return [f.code for f in findings(record)]


def failure_codes(record: EpisodeRecord) -> list[str]:
    """:func:`detect` as plain strings, the form stored in ``EpisodeRecord.failure_codes``."""
    return [code.value for code in detect(record)]


def findings(record: EpisodeRecord) -> list[Finding]:
    """Every failure code of ``record`` with its evidence, sorted by code value (see the module docstring)."""
    if record.success:
        return []
    found: list[Finding] = []

    def add(code: FailureCode, steps: list[int], detail: str) -> None:
        if steps or code in (FailureCode.STEP_LIMIT, FailureCode.WRONG_ANSWER):
            found.append(Finding(code, tuple(steps), detail))

    steps = record.steps
    is_db = record.env in TEXT_FORMAT_ENVS
    invalid = _flagged(steps, "invalid_action")
    unparsed = [s for s in steps if "format_error" in s.flags]
    tool = [s.index for s in unparsed if (s.parse_error or "").startswith(BAD_TOOL_CALL)]
    fmt = sorted({s.index for s in unparsed if s.index not in tool} | (set(invalid) if is_db else set()))
    if not is_db:
        add(FailureCode.INVALID_ACTION, invalid, f"{len(invalid)} step(s) the environment rejected")
    add(FailureCode.FORMAT_ERROR, fmt, f"{len(fmt)} reply(ies) not readable as an action")
    add(FailureCode.TOOL_ERROR, tool, f"{len(tool)} tool call(s) with an unknown tool or bad arguments")
    repeated, longest = _repeat_runs(record)
    add(FailureCode.REPEATED_ACTION, repeated, f"the same action ran up to {longest} times in a row")
    stale = [
        i for start, n in runs(stale_steps(record)) if n >= NO_PROGRESS_STEPS for i in range(start, start + n)
    ]
    add(
        FailureCode.NO_PROGRESS,
        [steps[i].index for i in stale],
        f"{len(stale)} step(s) in runs of >= {NO_PROGRESS_STEPS} without a new observation",
    )
    if is_db:
        errors = [
            s.index
            for s in steps
            if executed(s) and db_action(s.action or "").kind == "sql" and not is_sql_result(s.observation)
        ]
        add(FailureCode.SQL_ERROR, errors, f"{len(errors)} SQL statement(s) failed")
    if record.env == "code":
        edits = [
            s.index for s in steps if executed(s) and code_edit(s) and s.observation.startswith("Error:")
        ]
        add(FailureCode.EDIT_ERROR, edits, f"{len(edits)} edit(s) refused")
    if record.env == "apps":
        _apps_findings(record, add)
    _kit_findings(record, add)
    hooks = [s.index for s in steps if s.hook_errors]
    add(FailureCode.HOOK_ERROR, hooks, f"{sum(len(s.hook_errors) for s in steps)} hook error(s)")
    for flag, code in (("policy_error", FailureCode.POLICY_ERROR), ("env_error", FailureCode.ENV_ERROR)):
        add(code, _flagged(steps, flag), (record.error or flag)[:200])
    last = steps[-1] if steps else None
    if record.termination == "step_limit":
        add(FailureCode.STEP_LIMIT, [last.index] if last else [], f"stopped after {len(steps)} decisions")
    if record.termination == "terminated" and last is not None:
        add(FailureCode.WRONG_ANSWER, [last.index], f"ended by the agent with score {record.score:.2f}")
        why = _premature(record, last) if record.env != "code" else code_premature(record.steps)
        if why:
            add(FailureCode.PREMATURE_ANSWER, [last.index], why)
        if record.env == "code" and code_command(last.action or "") == "submit":
            add(
                FailureCode.TESTS_FAILING,
                [last.index],
                "submitted, but the change does not resolve the issue",
            )
    return sorted(found, key=lambda f: f.code.value)


def _kit_findings(record: EpisodeRecord, add: Any) -> None:
    """The findings of the env's kit detectors (a kit that is not installed here adds none). A detector that
    raises, or names a code outside the taxonomy, is a kit bug: reported as a ``DataError`` naming the kit."""
    kit = find_kit(record.env)
    if kit is None:
        return
    for detector in kit.detectors:
        name = getattr(detector, "__name__", repr(detector))
        try:
            found = list(detector(record))
        except Exception as exc:
            raise DataError(
                f"kit {kit.name!r}: detector {name} raised {type(exc).__name__}: {exc}",
                hint=f"fix the detector in the kit ({kit.source})",
            ) from exc
        for f in found:
            try:
                code = FailureCode(str(f.code))
            except ValueError:
                known = ", ".join(c.value for c in FailureCode)
                raise DataError(
                    f"kit {kit.name!r}: detector {name} reports unknown failure code {f.code!r}",
                    hint=f"use one of: {known}",
                ) from None
            add(code, list(f.steps), str(f.detail))


def _apps_findings(record: EpisodeRecord, add: Any) -> None:
    done = [s for s in record.steps if executed(s)]
    auth = [s.index for s in done if apps_evidence.is_auth_error(s.observation)]
    misuse = [s.index for s in done if apps_evidence.is_api_misuse(s.observation)]
    code = [s.index for s in done if apps_evidence.code_error(s.observation)]
    damage = [s.index for s in done if apps_evidence.collateral_damage(s.observation)]
    add(
        FailureCode.AUTH_ERROR,
        auth,
        f"{len(auth)} step(s) with an API call rejected as unauthenticated (401)",
    )
    add(FailureCode.API_ERROR, misuse, f"{len(misuse)} step(s) with a misused API (404/409/422)")
    add(FailureCode.CODE_ERROR, code, f"{len(code)} step(s) whose code raised or timed out")
    add(FailureCode.COLLATERAL_DAMAGE, damage, "the task changed data it was not asked to change")


def _flagged(steps: list[StepRecord], flag: str) -> list[int]:
    return [s.index for s in steps if flag in s.flags]


def _repeat_runs(record: EpisodeRecord) -> tuple[list[int], int]:
    """Steps in runs of >= REPEAT_RUN identical executed actions, and the longest run length."""
    done = [s for s in record.steps if executed(s)]
    keys = [action_key(record.env, s.action or "") for s in done]
    hits: list[int] = []
    longest, start = 0, 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or keys[i] != keys[start]:
            n = i - start
            if n >= REPEAT_RUN:
                hits.extend(s.index for s in done[start:i])
                longest = max(longest, n)
            start = i
    return hits, longest


def _premature(record: EpisodeRecord, last: StepRecord) -> str | None:
    """Why the agent's terminal action came before it had what the task needs (None: it did not)."""
    if record.score >= 1.0 or last.action is None:
        return None
    if record.env == "shop" and is_purchase(last):
        required = required_options(record.instruction)
        chosen = receipt_options(last.observation)
        missing = sorted(group for group in required if group not in chosen)
        if missing:
            return f"bought without selecting the required {', '.join(missing)}"
        return None
    if record.env == "db" and db_action(last.action).kind == "answer":
        before = [s for s in record.steps[:-1] if executed(s) and db_action(s.action or "").kind == "sql"]
        if record.task_type.upper() in DB_MUTATION_TYPES:
            writes = [s for s in before if is_db_write(db_action(s.action or "").sql)]
            if not any(is_sql_result(s.observation) for s in writes):
                return "committed before any INSERT/UPDATE/DELETE statement succeeded"
            return None
        if not any(is_sql_result(s.observation) and not is_empty_result(s.observation) for s in before):
            return "answered before any query returned rows"
    return None
