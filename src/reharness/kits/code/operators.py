"""code operators: run the tests before submitting, show the failing tests after an edit, explain edit errors.

They read the code env's ``ctx`` only (:mod:`reharness.kits.code.tracker`): ``state`` (``edits``,
``edit_error_streak``, ``last_command``, ``last_error``, ``tests_run_since_edit``, ``last_tests``),
``files_viewed``, ``task.fail_to_pass`` (the visible failing tests; empty in hidden mode) and the proposed
``action`` (``command``). None of them knows the gold patch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

SUBMIT = """
def submit_guard(ctx, nb):
    action = ctx.get("action") or {}
    if str(action.get("command") or "") != "submit":
        return None
    state = ctx.get("state") or {}
    task = ctx.get("task") or {}
    problem = None
    if int(state.get("edits") or 0) == 0:
        problem = "you have not changed the code yet. Find the function the issue is about and fix it."
    elif <<require_tests>> and not state.get("tests_run_since_edit"):
        tests = " ".join(str(t) for t in (task.get("fail_to_pass") or [])[:5])
        problem = "you have not run the tests since your last edit. Run them first: run_tests " + tests
    elif <<require_green>> and int((state.get("last_tests") or {}).get("failed") or 0) > 0:
        failing = (state.get("last_tests") or {}).get("failing") or []
        problem = "the last test run still had failures: " + ", ".join(str(t) for t in failing[:3])
    if problem is None:
        return None
    blocks = nb.get("submit_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["submit_blocks"] = blocks + 1
    return {"type": "block_and_prompt", "message": ("Not submitting yet: " + problem)[:900]}
"""


class SubmitGuard(Operator):
    name = "submit_guard"
    summary = "Block a submit before any edit, before the tests ran after the last edit, or while tests fail"
    codes = ("premature_answer", "tests_failing", "wrong_answer")
    envs = ("code",)
    signals = ("premature_answer",)
    priority = 20

    def space(self, env: str) -> ParamSpace:
        return {"require_tests": (True, False), "require_green": (True, False), "max_blocks": (2, 1, 4)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(
            SUBMIT,
            require_tests=params["require_tests"],
            require_green=params["require_green"],
            max_blocks=params["max_blocks"],
        )
        return {"before_action": Fragment("submit_guard", code)}


FAILING = """
def failing_test_hint(ctx, nb):
    state = ctx.get("state") or {}
    task = ctx.get("task") or {}
    command = str(state.get("last_command") or "")
    message = None
    if command in ("str_replace", "insert") and not state.get("last_error"):
        tests = [str(t) for t in (task.get("fail_to_pass") or [])][:5]
        message = "Edit applied. Run the tests" + (": run_tests " + " ".join(tests) if tests else ".")
    elif command == "run_tests" and <<after_tests>>:
        last = state.get("last_tests") or {}
        failing = [str(t) for t in (last.get("failing") or [])]
        if failing:
            path = failing[0].split("::")[0]
            message = (
                str(len(failing)) + " test(s) still fail, e.g. " + failing[0] + ". Read that test ("
                + "search the test name in " + path + ") and the function it calls, then fix the function."
            )
    if message is None:
        return None
    return {"type": "inject_hint", "message": message[:900]}
"""


class FailingTestHint(Operator):
    name = "failing_test_hint"
    summary = "After an edit, name the failing tests to run; after a failing run, point at the test to read"
    codes = ("tests_failing", "step_limit", "premature_answer")
    envs = ("code",)
    signals = ("step_limit_hit",)
    priority = 60

    def space(self, env: str) -> ParamSpace:
        return {"after_tests": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(FAILING, after_tests=params["after_tests"])
        return {"after_feedback": Fragment("failing_test_hint", code)}


EDIT = """
def edit_error_hint(ctx, nb):
    state = ctx.get("state") or {}
    command = str(state.get("last_command") or "")
    error = str(state.get("last_error") or "")
    if command not in ("str_replace", "insert") or not error:
        return None
    if int(state.get("edit_error_streak") or 0) < <<streak>>:
        return None
    if "not found" in error:
        advice = "View the lines first (view PATH START-END) and copy the old text exactly, "
        advice += "indentation included."
    elif "occurs" in error:
        advice = "Add the line before or after to the old text so that it matches only one place."
    elif "range" in error:
        advice = "Use a line number no larger than the number of lines of the file (view shows it)."
    else:
        advice = "Use a relative path of an existing file (view . lists them)."
    viewed = [str(p) for p in (ctx.get("files_viewed") or [])]
    if <<list_viewed>> and viewed:
        advice += " Files you viewed: " + ", ".join(viewed[-5:]) + "."
    return {"type": "inject_hint", "message": ("The edit failed: " + error + " " + advice)[:900]}
"""


class EditErrorHint(Operator):
    name = "edit_error_hint"
    summary = "After a refused edit, say why and how to write an edit that applies"
    codes = ("edit_error",)
    envs = ("code",)
    signals = ("edit_errors",)
    priority = 40

    def space(self, env: str) -> ParamSpace:
        return {"streak": (1, 2), "list_viewed": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(EDIT, streak=params["streak"], list_viewed=params["list_viewed"])
        return {"after_feedback": Fragment("edit_error_hint", code)}
