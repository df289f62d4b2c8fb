"""What hooks may see of a ``code`` episode (``ctx`` fields), from the agent's own commands and results.

``state`` {edits, edit_errors, edit_error_streak, last_error, test_runs, tests_run_since_edit, last_tests
{passed, failed, failing}, views, searches, last_command, submitted}, ``files_viewed``, ``files_edited`` and
``round``. Nothing here comes from the gold patch or the hidden tests.
"""

from __future__ import annotations

from typing import Any

from reharness.kits.code.testrun import TestRun

MAX_FAILING_SHOWN = 10


class EpisodeTracker:
    """Counters and history of one episode (see module docstring)."""

    def __init__(self) -> None:
        self.edits = 0
        self.edit_errors = 0
        self.edit_error_streak = 0
        self.last_error = ""
        self.test_runs = 0
        self.tests_run_since_edit = False
        self.last_tests: dict[str, Any] = {"passed": 0, "failed": 0, "failing": []}
        self.views = 0
        self.searches = 0
        self.last_command = ""
        self.submitted = False
        self.files_viewed: list[str] = []
        self.files_edited: list[str] = []
        self.format_errors = 0

    def record(self, command: str, path: str, error: str) -> None:
        """A command ran (``error`` is its ``Error:`` message, or empty)."""
        self.last_command = command
        self.last_error = error
        is_edit = command in ("str_replace", "insert")
        if is_edit and error:
            self.edit_errors += 1
            self.edit_error_streak += 1
        elif is_edit:
            self.edits += 1
            self.edit_error_streak = 0
            self.tests_run_since_edit = False
            if path not in self.files_edited:
                self.files_edited.append(path)
        if command == "view" and not error:
            self.views += 1
            if path not in self.files_viewed:
                self.files_viewed.append(path)
        if command == "search":
            self.searches += 1

    def record_tests(self, run: TestRun) -> None:
        self.test_runs += 1
        self.tests_run_since_edit = True
        failing = run.failing
        self.last_tests = {
            "passed": len(run.results) - len(failing),
            "failed": len(failing),
            "failing": failing[:MAX_FAILING_SHOWN],
            "timed_out": run.timed_out,
        }

    def record_invalid(self) -> None:
        self.format_errors += 1

    def snapshot(self, round_: int) -> dict[str, Any]:
        return {
            "state": {
                "edits": self.edits,
                "edit_errors": self.edit_errors,
                "edit_error_streak": self.edit_error_streak,
                "last_error": self.last_error,
                "test_runs": self.test_runs,
                "tests_run_since_edit": self.tests_run_since_edit,
                "last_tests": dict(self.last_tests, failing=list(self.last_tests["failing"])),
                "views": self.views,
                "searches": self.searches,
                "last_command": self.last_command,
                "submitted": self.submitted,
                "format_errors": self.format_errors,
            },
            "files_viewed": list(self.files_viewed),
            "files_edited": list(self.files_edited),
            "round": round_,
        }
