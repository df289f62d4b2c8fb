"""Deterministic failure detectors: which failure codes a recorded episode shows, and on which steps.

A successful episode has no codes. For a failed one each rule below looks only at the trajectory (actions,
observations, step flags, hook errors, termination), so the codes can be recomputed from any stored run and
the same record always gives the same codes. Step indices are ``StepRecord.index`` values. These are the
generic rules; an environment's kit adds its own (``EnvKit.detectors``: SQL errors, premature purchases,
refused edits, API errors …) and may say that its invalid actions are format errors.

- ``invalid_action``: a step the environment flagged invalid. For a kit with ``invalid_is_format`` (a text
  protocol whose only invalid actions are replies outside its format) they count as ``format_error``.
- ``format_error``: a reply the runtime could not parse into an action (no ``Action:`` line, empty reply, no
  tool call under the tools protocol).
- ``tool_error``: a tool call the runtime could not translate (unknown tool, missing or ill-typed arguments).
- ``repeated_action``: the same action executed :data:`REPEAT_RUN` (3) or more times in a row, counting
  executed actions only (a blocked or unparsed reply in between does not break the run); "the same" is the
  kit's ``action_key`` (default: the command text, case and whitespace folded).
- ``no_progress``: :data:`NO_PROGRESS_STEPS` (5) or more consecutive steps whose observation (or the harness
  message shown instead) had already been seen in the episode, counting the initial observation.
- ``wrong_answer``: the episode was ended by the agent's own terminal action (the env reported
  ``terminated`` without success). A premature answer (a kit's finding) is also a wrong answer.
- ``step_limit``: the episode ran out of decisions (``termination == "step_limit"``).
- ``hook_error``: a step recorded hook errors (a hook raised, timed out or returned an invalid effect).
- ``policy_error`` / ``env_error``: the step flagged so; the episode stopped there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reharness.core.errors import DataError
from reharness.envs.kit import EnvKit
from reharness.envs.registry import find_kit
from reharness.failures.codes import FailureCode
from reharness.failures.evidence import BAD_TOOL_CALL, action_key, executed, runs, stale_steps
from reharness.store.records import EpisodeRecord, StepRecord

#: ``repeated_action`` needs the same action this many times in a row.
REPEAT_RUN = 3
#: ``no_progress`` needs this many consecutive steps without a new observation.
NO_PROGRESS_STEPS = 5


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
    kit = find_kit(record.env)
    invalid_is_format = kit is not None and kit.invalid_is_format
    invalid = _flagged(steps, "invalid_action")
    unparsed = [s for s in steps if "format_error" in s.flags]
    tool = [s.index for s in unparsed if (s.parse_error or "").startswith(BAD_TOOL_CALL)]
    fmt = sorted(
        {s.index for s in unparsed if s.index not in tool} | (set(invalid) if invalid_is_format else set())
    )
    if not invalid_is_format:
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
    _kit_findings(record, kit, add)
    hooks = [s.index for s in steps if s.hook_errors]
    add(FailureCode.HOOK_ERROR, hooks, f"{sum(len(s.hook_errors) for s in steps)} hook error(s)")
    for flag, code in (("policy_error", FailureCode.POLICY_ERROR), ("env_error", FailureCode.ENV_ERROR)):
        add(code, _flagged(steps, flag), (record.error or flag)[:200])
    last = steps[-1] if steps else None
    if record.termination == "step_limit":
        add(FailureCode.STEP_LIMIT, [last.index] if last else [], f"stopped after {len(steps)} decisions")
    if record.termination == "terminated" and last is not None:
        add(FailureCode.WRONG_ANSWER, [last.index], f"ended by the agent with score {record.score:.2f}")
    return sorted(found, key=lambda f: f.code.value)


def _kit_findings(record: EpisodeRecord, kit: EnvKit | None, add: Any) -> None:
    """The findings of the env's kit detectors (a kit that is not installed here adds none). A detector that
    raises, or names a code outside the taxonomy, is a kit bug: reported as a ``DataError`` naming the kit."""
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
                code = FailureCode(f.code)
            except ValueError:
                known = ", ".join(c.value for c in FailureCode)
                raise DataError(
                    f"kit {kit.name!r}: detector {name} reports unknown failure code {f.code!r}",
                    hint=f"use one of: {known}",
                ) from None
            add(code, list(f.steps), str(f.detail))


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
