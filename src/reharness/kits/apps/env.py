"""``reharness/Apps-v0``: AppWorld-like tasks over simulated apps, solved by agent-written Python.

Each episode gets a fresh world (~100 people, the supervisor, seven apps in one SQLite database) and a fresh
**confined interpreter** (:class:`~reharness.core.sandbox.interpreter.ConfinedInterpreter`: a separate
``python -S`` process with rlimits, Landlock and seccomp, a host-side deadline with SIGKILL and respawn). An
action is Python code (a fenced block, or the ``execute(code)`` tool); ``apis`` calls made by the code come
back to the host, where :class:`~.server.AppServer` runs them against the world. The observation is what the
code printed or its traceback. ``apis.supervisor.complete_task`` ends the episode; the grader then runs the
task's tests over the database diff (:mod:`.grading`). ``info`` carries ``scenario_id`` and, at the end,
``tests`` and ``tgc`` (task passed); :func:`run_metrics` gives TGC and SGC over a run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from reharness.core.errors import EnvError
from reharness.core.sandbox.interpreter import ConfinedInterpreter, InterpreterLimits
from reharness.envs.base import Task, TextEnv, Transition
from reharness.kits.apps import handlers, handlers_comm, protocol
from reharness.kits.apps.drafts import PRELUDE
from reharness.kits.apps.generator import VARIANTS, make_task
from reharness.kits.apps.grading import grade, report
from reharness.kits.apps.server import AppServer
from reharness.kits.apps.world import World

assert handlers and handlers_comm  # imported for their registrations
_CALL = re.compile(r"apis\.(\w+)\.(\w+)")
HELPERS_READY = 'print("helpers ready: token(app), fetch(api, **kwargs)")'


class AppsEnv(TextEnv):
    """AppWorld-like environment (see module docstring)."""

    name: ClassVar[str] = "apps"
    env_id: ClassVar[str] = "reharness/Apps-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 30

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        step_timeout_s: float = 5.0,
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        if not step_timeout_s > 0:
            raise EnvError(f"apps: step_timeout_s must be positive, got {step_timeout_s}")
        self.interpreter = ConfinedInterpreter(self._handle, InterpreterLimits(step_timeout_s=step_timeout_s))
        self.world: World | None = None
        self.server: AppServer | None = None
        self._before: dict[str, Any] = {}
        self._stats: dict[str, Any] = {}

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        if not 0 <= index < self.split_size:
            raise EnvError(f"apps: task index {index} out of range 0..{self.split_size - 1}")
        return make_task(self.env_id, split, index)

    # ------------------------------------------------------------------ episode
    def _handle(self, app: str, api: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self.server is not None
        if self.server.completion is not None:
            return {"ok": False, "status": 409, "message": "The task is already completed."}
        return self.server.handle(app, api, args)

    def _load(self, task: Task) -> None:
        try:
            world = World(dict(task.state["world"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise EnvError(f"apps: malformed task {task.task_id!r}: {exc}") from exc
        self.close_world()
        self.interpreter.reset()  # a fresh namespace (and process) per episode
        self.world, self.server = world, AppServer(world)
        self._before = world.snapshot()
        self._stats = {"api_calls": 0, "errors": {}, "last_status": None, "last_error": "", "timeouts": 0}
        self._helpers_ready = False  # the expert's helpers (token, fetch) are defined in the namespace

    def _initial_observation(self) -> str:
        assert self.task is not None
        state = self.task.state
        return protocol.task_prompt(self.task.instruction, state["supervisor"], state["today"])

    def _transition(self, action: str) -> Transition:
        assert self.task is not None and self.server is not None and self.world is not None
        code = protocol.extract_code(action)
        if code is None:
            return Transition(
                observation=protocol.FORMAT_ERROR, invalid=True, info={"error_kind": "format_error"}
            )
        result = self.interpreter.execute(code)
        self._account(result)
        if result.restarted:
            self._helpers_ready = False
        elif result.ok and code.startswith(PRELUDE):
            self._helpers_ready = True
        obs = protocol.observation(result)
        info: dict[str, Any] = {
            "api_calls": result.api_calls,
            "error_kind": self._stats["last_error"] or None,
        }
        if self.server.completion is None:
            return Transition(observation=obs, info=info)
        tests = grade(dict(self.task.gold), self._before, self.world.snapshot(), self.server.completion)
        passed = all(t.passed for t in tests)
        score = sum(t.passed for t in tests) / len(tests)
        info |= {
            "tests": [{"name": t.name, "passed": t.passed, "detail": t.detail} for t in tests],
            "tgc": passed,
        }
        final = f"{obs}\nTask completed. {report(tests)}"
        return Transition(
            observation=final, reward=float(passed), done=True, success=passed, score=score, info=info
        )

    def _account(self, result: Any) -> None:
        stats = self._stats
        stats["api_calls"] += result.api_calls
        stats["timeouts"] += int(result.timed_out)
        last = ""
        for _, _, status in result.calls:
            if status != 200:
                stats["errors"][str(status)] = stats["errors"].get(str(status), 0) + 1
                last = {401: "auth_error", 404: "not_found", 422: "validation_error"}.get(status, "api_error")
        if result.timed_out:
            last = "timeout"
        elif result.error is not None and not last:
            last = "code_error"
        stats["last_status"] = result.calls[-1][2] if result.calls else None
        stats["last_error"] = last

    def close_world(self) -> None:
        if self.world is not None:
            self.world.db.close()
            self.world = self.server = None

    def close(self) -> None:
        self.close_world()
        self.interpreter.close()
        super().close()

    # ------------------------------------------------------------------ policies
    def expert_action(self) -> str:
        """The task's ground-truth program in two steps: first the helpers (``token(app)`` logs in with the
        supervisor's password, ``fetch(api, **kw)`` pages through a list API), then the task's own code
        (lookups, changes, ``complete_task``). State-based: after a restart of the interpreter (time-out,
        crash) the helpers are defined again."""
        assert self.task is not None, "call reset() first"
        code = str(self.task.gold["code"])
        if not code.startswith(PRELUDE):
            return protocol.fence(code)
        if not self._helpers_ready:
            return protocol.fence(PRELUDE + HELPERS_READY)
        return protocol.fence(code[len(PRELUDE) :])

    def random_action(self, rng: random.Random) -> str:
        assert self.task is not None, "call reset() first"
        app = rng.choice(("notes", "todo", "payments", "email", "contacts", "calendar", "files"))
        choices = [
            "print(apis.api_docs.show_app_descriptions())",
            f"print(apis.api_docs.show_api_descriptions(app_name={app!r}))",
            f"print(apis.{app}.login(username='me@example.com', password='{rng.randrange(10**6)}'))",
            f"print(apis.{app}.show_items(page_index={rng.randrange(3)}))",
            "print(apis.supervisor.show_profile())",
            f"apis.supervisor.complete_task(answer='{rng.randrange(10)}')",
        ]
        return protocol.fence(rng.choice(choices))

    # ------------------------------------------------------------------ tools and hooks
    def tools(self) -> list[dict[str, Any]]:
        return [dict(t) for t in protocol.TOOLS]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return protocol.action_from_tool_call(name, arguments)

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return protocol.tool_call_from_action(action)

    def runtime_state(self) -> dict[str, Any]:
        stats = self._stats
        return {
            "api_calls": stats.get("api_calls", 0),
            "api_errors": dict(stats.get("errors", {})),
            "last_status": stats.get("last_status"),
            "last_error_kind": stats.get("last_error", ""),
            "timeouts": stats.get("timeouts", 0),
            "logged_in": sorted({app for app, _ in (self.server.tokens.values() if self.server else [])}),
            "completed": bool(self.server and self.server.completion is not None),
        }

    def action_fields(self, action: str) -> dict[str, Any]:
        code = protocol.extract_code(action)
        calls = sorted({f"{a}.{b}" for a, b in _CALL.findall(code or "")})
        return {"code": code, "api_calls": calls, "completes": "complete_task" in (code or "")}

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        state = self.task.state
        return {
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "apps": list(state["apps"]),
            "scenario_id": state["scenario_id"],
            "asks_question": self.task.gold.get("answer") is not None,
        }

    @classmethod
    def run_metrics(cls, results: Sequence[tuple[str, bool]]) -> dict[str, Any]:
        """TGC and SGC of a run (:func:`run_metrics`)."""
        return run_metrics(results)

    def _info(self, invalid: bool, extra: dict[str, Any]) -> dict[str, Any]:
        info = super()._info(invalid, extra)
        assert self.task is not None
        info["scenario_id"] = self.task.state["scenario_id"]
        return info


def run_metrics(results: Iterable[tuple[str, bool]]) -> dict[str, Any]:
    """TGC and SGC (percent) from ``(task_id, success)`` pairs of ``apps`` tasks.

    TGC = tasks passed. SGC = scenarios all of whose variants in the run passed (AppWorld counts a scenario
    only when all three pass; ``complete_scenarios`` says how many had all three variants in the run). The
    scenario of ``apps/<split>/<index>`` is ``index // 3`` of that split (see :mod:`.generator`).
    """
    by_scenario: dict[str, list[bool]] = {}
    for task_id, ok in results:
        _, split, index = task_id.split("/")
        by_scenario.setdefault(f"{split}/{int(index) // VARIANTS}", []).append(bool(ok))
    flat = [ok for oks in by_scenario.values() for ok in oks]
    tgc = 100.0 * sum(flat) / len(flat) if flat else 0.0
    sgc = 100.0 * sum(all(v) for v in by_scenario.values()) / len(by_scenario) if by_scenario else 0.0
    complete = sum(len(v) >= VARIANTS for v in by_scenario.values())
    return {
        "tgc": round(tgc, 2),
        "sgc": round(sgc, 2),
        "scenarios": len(by_scenario),
        "complete_scenarios": complete,
    }
