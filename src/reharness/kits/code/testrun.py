"""Run a repository's tests in a confined subprocess: the parent side of :mod:`.runner`.

:func:`run_tests` copies the tree (``path → text``) into a fresh scratch directory, starts
``python -I -S -B runner.py`` there (its own session, minimal environment, stdout and stderr on files outside
the tree, bounded by ``RLIMIT_FSIZE``), waits at most ``limits.wall_s`` and kills the whole process group on
timeout. The runner confines itself (``reharness/core/sandbox/confine.py``: rlimits, ``no_new_privs``,
Landlock with only the scratch copy writable and no TCP, seccomp without sockets/fork/exec) before importing
repository code. The working tree itself is never touched by a test run, and the scratch copy is removed
afterwards.

Tests can only report what they did: the runner prints its verdicts as the last ``RESULT`` line, so code under
test that deliberately forges that line could fake a verdict (SWE-bench parses test logs and has the same
property); grading re-applies the ``test_patch`` so the tests themselves are always the instance's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.sandbox import confine as _confine

RUNNER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
#: The sandbox's confinement module (``reharness/core/sandbox/confine.py``), which the runner loads by path.
CONFINE_PATH = os.path.abspath(_confine.__file__)
_MAX_OUTPUT = 4 * 1024 * 1024


class TestLimits(BaseModel):
    """Limits of one test run."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(frozen=True)

    wall_s: float = Field(default=20.0, gt=0, description="wall-clock limit of the whole run")
    per_test_s: float = Field(default=5.0, gt=0, description="alarm for one test")
    cpu_seconds: int = Field(default=20, gt=0, description="RLIMIT_CPU of the runner")
    memory_bytes: int = Field(default=1 << 30, gt=0, description="RLIMIT_AS of the runner")
    max_open_files: int = Field(default=64, gt=0)
    fsize_bytes: int = Field(default=_MAX_OUTPUT, gt=0, description="largest file the runner may write")


class TestRun(BaseModel):
    """What one run reported: per-test status (``passed`` / ``failed`` / ``error`` / ``timeout``)."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(frozen=True)

    results: dict[str, str] = Field(default_factory=dict)
    messages: dict[str, str] = Field(default_factory=dict)
    timed_out: bool = False
    error: str = ""
    caps: dict[str, object] = Field(default_factory=dict)
    seconds: float = 0.0

    def passed(self, test_id: str) -> bool:
        return self.results.get(test_id) == "passed"

    @property
    def failing(self) -> list[str]:
        return [t for t, s in self.results.items() if s != "passed"]


def write_tree(files: Mapping[str, str], root: str) -> None:
    """Write ``files`` beneath ``root`` (paths are relative, ``/``-separated)."""
    for path, text in files.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)


def run_tests(
    files: Mapping[str, str], tests: Iterable[str] = (), limits: TestLimits | None = None
) -> TestRun:
    """Run ``tests`` (all tests when empty) on a scratch copy of ``files`` in a confined subprocess."""
    limits = limits or TestLimits()
    scratch = tempfile.mkdtemp(prefix="reharness-code-run-")
    tree = os.path.join(scratch, "repo")
    os.mkdir(tree)
    started = time.monotonic()
    try:
        write_tree(files, tree)
        config = {
            "confine_path": CONFINE_PATH,
            "ppid": os.getpid(),
            "tests": list(tests),
            "per_test_s": limits.per_test_s,
            "confine": {
                "memory_bytes": limits.memory_bytes,
                "cpu_seconds": limits.cpu_seconds,
                "max_open_files": limits.max_open_files,
                "fsize_bytes": limits.fsize_bytes,
            },
        }
        with open(os.path.join(scratch, "out"), "w+b") as out:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", RUNNER_PATH, json.dumps(config)],
                cwd=tree,
                env={"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
            try:
                proc.wait(limits.wall_s)
            except subprocess.TimeoutExpired:
                _kill(proc)
                return TestRun(
                    timed_out=True,
                    error=f"the test run timed out after {limits.wall_s:g} s (an infinite loop?) "
                    "and was killed",
                    seconds=time.monotonic() - started,
                )
            finally:
                _kill(proc)
            out.seek(0)
            text = out.read(_MAX_OUTPUT).decode("utf-8", "replace")
        # the scratch path is random: keep it out of what the agent sees (trajectories stay reproducible)
        text = text.replace(os.path.realpath(tree) + os.sep, "").replace(tree + os.sep, "")
        return _parse(text, proc.returncode, time.monotonic() - started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    for kill, target in ((os.killpg, proc.pid), (os.kill, proc.pid)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(target, signal.SIGKILL)
    proc.wait()


def _parse(text: str, code: int | None, seconds: float) -> TestRun:
    lines = [line for line in text.splitlines() if line.startswith("RESULT ")]
    if not lines:
        tail = text.strip().splitlines()[-3:]
        why = f"the test runner exited with status {code} before reporting"
        return TestRun(error=why + (": " + " | ".join(tail) if tail else ""), seconds=seconds)
    try:
        data = json.loads(lines[-1][len("RESULT ") :])
        return TestRun(
            results={str(k): str(v) for k, v in data["results"].items()},
            messages={str(k): str(v) for k, v in data.get("messages", {}).items()},
            caps=dict(data.get("caps", {})),
            seconds=seconds,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return TestRun(error=f"unreadable test report: {exc}", seconds=seconds)
