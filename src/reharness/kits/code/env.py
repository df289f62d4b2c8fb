"""``reharness/Code-v0``: SWE-Gym-like repository repair with SWE-agent / OpenHands-style tools.

Each task is one instance in the SWE-bench schema (:mod:`.schema`): generated (:mod:`.generator`, default) or
loaded from a SWE-bench / SWE-Gym file with the repositories on disk (``instances_path`` + ``repos_dir``,
:mod:`.loader`; its single split is ``"data"``). The agent sees the issue and edits a working tree in a temp
dir with ``view``, ``search``, ``str_replace``, ``insert``, ``run_tests`` and ``submit`` (:mod:`.protocol`;
text commands, or tool calls with ``protocol="fc"``). Tests run in a confined subprocess (:mod:`.testrun`).
``tests="visible"`` (default) starts the tree with the ``test_patch`` applied, so the failing tests can be
run; ``"hidden"`` starts at ``base_commit`` as SWE-bench does. On ``submit`` the agent's diff is applied to a
fresh copy of the start tree, the ``test_patch`` files are restored over it, and the instance is resolved iff
every ``FAIL_TO_PASS`` and every ``PASS_TO_PASS`` test passes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from reharness.core.errors import EnvError, did_you_mean
from reharness.envs.base import SPLITS, Task, TextEnv, Transition
from reharness.kits.code import protocol
from reharness.kits.code.diff import DiffError, apply_diff, make_diff, touched_files
from reharness.kits.code.expert import expert_action, random_action
from reharness.kits.code.generator import make_instance
from reharness.kits.code.loader import (
    DATA_SPLIT,
    instance_task,
    load_instances,
    repo_files,
    task_from_instance,
)
from reharness.kits.code.schema import CodeInstance
from reharness.kits.code.testrun import TestLimits, TestRun, run_tests
from reharness.kits.code.tracker import EpisodeTracker
from reharness.kits.code.workspace import ToolError, Workspace

TEST_MODES = ("visible", "hidden")
#: Generated tasks kept per process (a task is a pure function of its split and index).
_TASK_CACHE = 4096
_TASKS: dict[tuple[str, int], Task] = {}
PROTOCOLS = ("text", "fc")
OBSERVATION_LIMIT = 4000
_INTRO = {
    "text": "Reply with exactly one command per turn, inside a ``` block:\n" + protocol.HELP,
    "fc": "Use the tools view, search, str_replace, insert, run_tests and submit, one call per turn.",
}


class CodeEnv(TextEnv):
    """SWE-Gym-like environment (see module docstring)."""

    name: ClassVar[str] = "code"
    env_id: ClassVar[str] = "reharness/Code-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 30
    max_observation_chars: ClassVar[int] = 20_000

    def available_splits(self) -> tuple[str, ...]:
        return (DATA_SPLIT,) if getattr(self, "_dataset", None) is not None else SPLITS

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        protocol: str = "text",
        tests: str = "visible",
        instances_path: str | Path | None = None,
        repos_dir: str | Path | None = None,
        test_limits: TestLimits | Mapping[str, Any] | None = None,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise EnvError(
                f"code: unknown protocol {protocol!r}", hint=did_you_mean(str(protocol), list(PROTOCOLS))
            )
        if tests not in TEST_MODES:
            raise EnvError(
                f"code: unknown tests mode {tests!r}", hint=did_you_mean(str(tests), list(TEST_MODES))
            )
        self.protocol, self.tests_mode = protocol, tests
        self.limits = (
            test_limits if isinstance(test_limits, TestLimits) else TestLimits(**(test_limits or {}))
        )
        self._dataset: list[Task] | None = None
        self.repos_dir = Path(repos_dir) if repos_dir is not None else None
        if instances_path is not None:
            if self.repos_dir is None:
                raise EnvError(
                    "code: instances_path needs repos_dir",
                    hint="pass repos_dir=DIR with one checkout per repo",
                )
            self._dataset = [
                instance_task(inst, i, self.repos_dir)
                for i, inst in enumerate(load_instances(instances_path))
            ]
            split = DATA_SPLIT if split == "train" else split
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        self.workspace: Workspace | None = None
        self.tracker = EpisodeTracker()
        self.instance: CodeInstance | None = None
        self.start_files: dict[str, str] = {}
        self.tested_files: dict[str, str] = {}
        self.last_run: TestRun | None = None
        self.last_grade: dict[str, Any] = {}

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        if self._dataset is not None:
            if split != DATA_SPLIT:
                raise EnvError(
                    f"code: a loaded instance file has only the split {DATA_SPLIT!r}, not {split!r}"
                )
            return self.get_task(index)
        key = (split, index)
        if key not in _TASKS:  # drawing costs ~10 generations (one split owns ~10%): keep what was drawn
            if len(_TASKS) >= _TASK_CACHE:
                _TASKS.pop(next(iter(_TASKS)))
            _TASKS[key] = self.draw_task(
                split,
                index,
                lambda rng, task_id: task_from_instance(make_instance(rng, task_id), task_id, split),
            )
        return _TASKS[key]

    def get_task(self, index: int) -> Task:
        if self._dataset is None:
            return super().get_task(index)
        if not 0 <= index < len(self._dataset):
            raise EnvError(f"code: task index {index} out of range 0..{len(self._dataset) - 1}")
        return self._dataset[index]

    def num_tasks(self) -> int:
        return len(self._dataset) if self._dataset is not None else super().num_tasks()

    def task_by_id(self, task_id: str) -> Task:
        if self._dataset is None:
            return super().task_by_id(task_id)
        for task in self._dataset:
            if task_id in (task.task_id, task.state.get("instance_id")):
                return task
        raise EnvError(
            f"code: no instance {task_id!r}", hint=f"task ids look like {self._dataset[0].task_id!r}"
        )

    # ------------------------------------------------------------------ episode
    def _load(self, task: Task) -> None:
        try:
            instance = CodeInstance(**dict(task.state), patch=task.gold.get("patch", ""))
        except (TypeError, ValueError) as exc:
            raise EnvError(f"code: malformed task {task.task_id!r}: {exc}") from exc
        base = dict(instance.files) if instance.files else repo_files(self.repos_dir, instance)
        try:
            tested = apply_diff(base, instance.test_patch)
        except DiffError as exc:
            raise EnvError(f"code: the test_patch of {instance.instance_id} does not apply: {exc}") from exc
        self.close_workspace()
        self.instance = instance
        self.tested_files = {p: tested[p] for p in touched_files(instance.test_patch) if p in tested}
        self.start_files = tested if self.tests_mode == "visible" else base
        self.workspace = Workspace(self.start_files)
        self.tracker = EpisodeTracker()
        self.last_run, self.last_grade = None, {}

    def _initial_observation(self) -> str:
        assert self.instance is not None
        visible = (
            "The failing tests of the issue are in the tests/ folder. "
            if self.tests_mode == "visible"
            else ""
        )
        return (
            f"You are working in the repository {self.instance.repo} "
            f"(base commit {self.instance.base_commit[:12]}). "
            "Fix the issue below by editing the source code; do not change the tests. "
            f"{visible}When you are done, submit.\n\n{_INTRO[self.protocol]}\n\n"
            f"<issue>\n{self.instance.problem_statement.strip()}\n</issue>"
        )

    def _transition(self, action: str) -> Transition:
        assert self.workspace is not None and self.instance is not None
        command = protocol.parse(action)
        if command.error:
            self.tracker.record_invalid()
            return Transition(
                observation=f"Error: {command.error}", invalid=True, info={"error_kind": "format_error"}
            )
        if command.name == "submit":
            return self._submit()
        if command.name == "run_tests":
            return self._run_tests(list(command.tests))
        ws = self.workspace
        try:
            if command.name == "view":
                text = ws.view(command.path, command.start, command.end)
            elif command.name == "search":
                text = ws.search(command.pattern, command.path)
            elif command.name == "str_replace":
                text = ws.str_replace(command.path, command.old, command.new)
            else:
                text = ws.insert(command.path, command.line, command.new)
        except (ToolError, OSError) as exc:
            message = str(exc).replace(ws.root + "/", "")  # the temp dir's name is random
            self.tracker.record(command.name, command.path, message)
            return Transition(observation=f"Error: {message}", info={"error_kind": f"{command.name}_error"})
        self.tracker.record(command.name, command.path.strip().strip("/") or ".", "")
        return Transition(observation=_truncate(text), info={"error_kind": "none"})

    def _run_tests(self, tests: list[str]) -> Transition:
        assert self.workspace is not None
        run = run_tests(self.workspace.files(), tests, self.limits)
        self.last_run = run
        self.tracker.record_tests(run)
        if run.error:
            return Transition(
                observation=f"Error: {run.error}",
                info={"error_kind": "tests_timeout" if run.timed_out else "tests_error"},
            )
        return Transition(
            observation=_truncate(summarise(run)),
            info={"error_kind": "none", "tests_failed": len(run.failing)},
        )

    def _submit(self) -> Transition:
        grade = self.grade()
        self.tracker.submitted = True
        self.last_grade = grade
        resolved = bool(grade["resolved"])
        f2p, p2p = grade["fail_to_pass"], grade["pass_to_pass"]
        text = (
            f"Submitted. Resolved: {'yes' if resolved else 'no'} "
            f"(FAIL_TO_PASS {f2p['passed']}/{f2p['total']} pass, "
            f"PASS_TO_PASS {p2p['passed']}/{p2p['total']} pass)."
        )
        if grade.get("error"):
            text += f" {grade['error']}"
        info = {"resolved": resolved, "patch": grade["patch"], "error_kind": "none"}
        reward = 1.0 if resolved else 0.0
        return Transition(
            observation=text, reward=reward, done=True, success=resolved, score=reward, info=info
        )

    def grade(self, files: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Grade the agent's diff (of ``files``, default: the working tree) on a fresh copy of the start."""
        assert self.instance is not None and self.workspace is not None
        current = dict(files) if files is not None else self.workspace.files()
        patch = make_diff(self.start_files, current)
        f2p, p2p = self.instance.FAIL_TO_PASS, self.instance.PASS_TO_PASS
        result: dict[str, Any] = {"patch": patch, "resolved": False, "error": ""}
        try:
            fresh = apply_diff(self.start_files, patch) | self.tested_files
        except DiffError as exc:
            result["error"] = f"the diff does not apply: {exc}"
            fresh = None
        run = run_tests(fresh, [*f2p, *p2p], self.limits) if fresh is not None else TestRun(error="no tree")
        if run.error and not result["error"]:
            result["error"] = run.error
        result["fail_to_pass"] = {"passed": sum(run.passed(t) for t in f2p), "total": len(f2p)}
        result["pass_to_pass"] = {"passed": sum(run.passed(t) for t in p2p), "total": len(p2p)}
        result["resolved"] = not run.error and all(run.passed(t) for t in [*f2p, *p2p])
        return result

    def close_workspace(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None

    def close(self) -> None:
        self.close_workspace()
        super().close()

    # ------------------------------------------------------------------ policies
    def target_files(self) -> dict[str, str]:
        """The start tree with the gold patch applied (what the solver steers to)."""
        assert self.instance is not None
        return apply_diff(self.start_files, self.instance.patch)

    def expert_action(self) -> str:
        assert self.workspace is not None and self.instance is not None, "call reset() first"
        tests = self.instance.FAIL_TO_PASS if self.tests_mode == "visible" else []
        return expert_action(self.workspace.files(), self.target_files(), self.tracker, list(tests))

    def gold_action(self) -> str:
        """The gold patch played through the tools (the solver)."""
        return self.expert_action()

    def random_action(self, rng: random.Random) -> str:
        assert self.workspace is not None, "call reset() first"
        return random_action(self.workspace.files(), rng)

    # ------------------------------------------------------------------ tools and hooks
    def tools(self) -> list[dict[str, Any]]:
        return [dict(t) for t in protocol.TOOLS]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return protocol.action_from_tool_call(name, arguments)

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return protocol.tool_call_from_action(action)

    def runtime_state(self) -> dict[str, Any]:
        snapshot = self.tracker.snapshot(self.steps)
        snapshot["protocol"] = self.protocol
        snapshot["tests_mode"] = self.tests_mode
        return snapshot

    def action_fields(self, action: str) -> dict[str, Any]:
        c = protocol.parse(action)
        return {"command": c.name, "path": c.path, "error": c.error, "tests": list(c.tests)}

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None and self.instance is not None
        return {
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "repo": self.instance.repo,
            "instance_id": self.instance.instance_id,
            "fail_to_pass": list(self.instance.FAIL_TO_PASS) if self.tests_mode == "visible" else [],
        }


def summarise(run: TestRun) -> str:
    """The observation of a test run: counts, then each failing test with its reason."""
    failing = run.failing
    lines = [f"[Tests] {len(run.results) - len(failing)} passed, {len(failing)} failed"]
    for test_id in failing:
        lines.append(
            f"{run.results[test_id].upper()} {test_id}: {run.messages.get(test_id, '')}".rstrip(": ")
        )
    return "\n".join(lines)


def _truncate(text: str, limit: int = OBSERVATION_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[TRUNCATED]"
