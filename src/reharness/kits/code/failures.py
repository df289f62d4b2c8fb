"""code failure evidence, detectors and runtime signals (edits, test runs, premature submits)."""

from __future__ import annotations

from collections.abc import Iterator

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.failures.evidence import executed
from reharness.store.records import EpisodeRecord, StepRecord


def code_command(action: str) -> str:
    """The command name of a code action (``str_replace``, ``submit``, …; empty when unreadable)."""
    from reharness.kits.code.protocol import parse

    return parse(action).name


def code_edit(step: StepRecord) -> bool:
    return code_command(step.action or "") in ("str_replace", "insert")


def code_premature(steps: list[StepRecord]) -> str | None:
    """Why a ``submit`` came too early: no successful edit, or no test run after the last one."""
    done = [s for s in steps[:-1] if executed(s)]
    edits = [i for i, s in enumerate(done) if code_edit(s) and not s.observation.startswith("Error:")]
    if not edits:
        return "submitted without any successful edit"
    if not any(code_command(s.action or "") == "run_tests" for s in done[edits[-1] + 1 :]):
        return "submitted without running the tests after the last edit"
    return None


def detect(record: EpisodeRecord) -> Iterator[Finding]:
    steps = record.steps
    edits = [s.index for s in steps if executed(s) and code_edit(s) and s.observation.startswith("Error:")]
    yield Finding(FailureCode.EDIT_ERROR, tuple(edits), f"{len(edits)} edit(s) refused")
    last = steps[-1] if steps else None
    if record.termination == "terminated" and last is not None:
        why = code_premature(steps)
        if why:
            yield Finding(FailureCode.PREMATURE_ANSWER, (last.index,), why)
        if code_command(last.action or "") == "submit":
            detail = "submitted, but the change does not resolve the issue"
            yield Finding(FailureCode.TESTS_FAILING, (last.index,), detail)


def signals(record: EpisodeRecord) -> dict[str, int | float]:
    """``edits``, ``edit_errors``, ``test_runs``, ``submitted``, ``premature_answer`` (a submit with no edit
    or no test run after the last edit)."""
    done = [s for s in record.steps if executed(s)]
    commands = [code_command(s.action or "") for s in done]
    submitted = bool(commands) and commands[-1] == "submit"
    return {
        "edits": sum(code_edit(s) and not s.observation.startswith("Error:") for s in done),
        "edit_errors": sum(code_edit(s) and s.observation.startswith("Error:") for s in done),
        "test_runs": commands.count("run_tests"),
        "submitted": int(submitted),
        "premature_answer": int(submitted and code_premature(record.steps) is not None),
    }
