"""``bfcl``: BFCL v4 multi-turn scenarios as a reharness text environment, graded by BFCL's own checker.

An episode is one BFCL entry. The observation opens with the functions available (one signature a line)
and the first user turn. Each action is either function calls in BFCL's format — ``cd(folder='document')``
or a list ``[cd(folder='document'), ls()]`` (one line) — which run on the scenario's stateful backends and
answer with their results, or ``end_turn``, which closes the user turn (the next user message follows; after
the last turn the episode ends and is graded). The tool-calling protocol offers every available function plus
an ``end_turn`` tool.

Grading is BFCL's ``multi_turn_checker`` (state check and response check after every turn) on the calls the
episode made, turn by turn; success is its verdict, and ``info['bfcl_error_type']`` says why it failed.
Calls are parsed with :mod:`ast` in the host (plain calls with literal arguments only) and executed only in
the confined worker (:mod:`.backend`, :mod:`.worker`), never in the host interpreter; the worker drops every
backend instance at each episode start, so nothing leaks from one episode to the next.

Options: ``category`` (``base`` by default; ``miss_func``, ``miss_param``, ``long_context``). Splits: by
scenario, see :mod:`.data` — all of it is BFCL's public test set. The scripted solver replays the ground-truth
calls, one call a step, then ``end_turn``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import random
from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.core.errors import EnvError, did_you_mean
from reharness.envs.base import SPLITS, Task, TextEnv, Transition
from reharness.kits.bfcl import data
from reharness.kits.bfcl.backend import BfclWorker, WorkerFailed

_END_TURN_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": data.END_TURN,
        "description": "Finish the user's current request (call it when no more calls are needed).",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}


def _user_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user").strip()


class BfclEnv(TextEnv):
    """BFCL multi-turn (see module docstring)."""

    name: ClassVar[str] = "bfcl"
    env_id: ClassVar[str] = "reharness/BFCLMultiTurn-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 60
    max_observation_chars: ClassVar[int] = 40_000

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        category: str = "base",
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        paths = [data.module_root("bfcl_eval"), data.module_root("mpmath")]
        if category not in data.CATEGORIES:
            raise EnvError(
                f"bfcl: unknown category {category!r}", hint=did_you_mean(category, list(data.CATEGORIES))
            )
        self.category = category
        self._worker = BfclWorker(paths)
        self._package_version = importlib.metadata.version("bfcl-eval")
        self._by_split: dict[str, list[int]] = {s: [] for s in SPLITS}
        for position, (entry, _) in enumerate(data.load_category(category)):
            self._by_split[data.split_of_scenario(data.scenario_number(entry["id"]))].append(position)
        self.entry: dict[str, Any] = {}
        self.ground_truth: list[list[str]] = []
        self.turn = 0
        self.model_calls: list[list[list[str]]] = []
        self.cwd: str | None = None
        self.verdict: dict[str, Any] = {}
        self._docs: dict[str, dict[str, Any]] = {}
        self._withheld: dict[str, dict[str, Any]] = {}
        self._tools: list[dict[str, Any]] = []
        self._last_results: list[str] = []

    def close(self) -> None:
        self._worker.close()

    # ------------------------------------------------------------------ tasks
    def num_tasks(self) -> int:
        return len(self._by_split[self.split])

    def generate_task(self, split: str, index: int) -> Task:
        if split not in SPLITS:
            raise EnvError(f"bfcl: unknown split {split!r}", hint=did_you_mean(split, list(SPLITS)))
        positions = self._by_split[split]
        if not 0 <= index < len(positions):
            raise EnvError(
                f"bfcl: task index {index} out of range 0..{len(positions) - 1} of split {split!r}"
            )
        entry, _ = data.load_category(self.category)[positions[index]]
        return Task(
            task_id=f"bfcl/{split}/{index:06d}",
            split=split,
            instruction=_user_text(entry["question"][0]),
            task_type="+".join(sorted(entry["involved_classes"])),
            state={"entry_id": entry["id"], "category": self.category, "bfcl_eval": self._package_version},
        )

    def _load(self, task: Task) -> None:
        wanted = task.state.get("entry_id")
        found = [pair for pair in data.load_category(self.category) if pair[0]["id"] == wanted]
        if not found:
            raise EnvError(f"bfcl: task {task.task_id!r} names no {self.category} entry ({wanted!r})")
        entry, truth = found[0]
        self.entry, self.ground_truth = entry, truth
        self.turn = 0
        self.model_calls = [[] for _ in truth]
        self.cwd, self.verdict, self._last_results = None, {}, []
        self._refresh_functions()
        message = {k: entry[k] for k in ("id", "initial_config", "involved_classes")}
        self._request({"op": "start", "entry": message}, "ok")

    def _request(self, message: dict[str, Any], expect: str) -> dict[str, Any]:
        try:
            return self._worker.request(message, expect)
        except WorkerFailed as exc:
            raise EnvError(
                f"bfcl: {exc}", hint="the episode's backend state is lost; rerun the episode"
            ) from None

    def _refresh_functions(self) -> None:
        missed = self.entry.get("missed_function") or {}
        hidden = {f for turn, names in missed.items() if int(turn) > self.turn for f in names}
        excluded = set(self.entry.get("excluded_function", [])) | hidden
        classes = self.entry["involved_classes"]
        every = {doc["name"]: doc for cls in classes for doc in data.function_docs(cls)}
        self._docs = {name: doc for name, doc in every.items() if name not in excluded}
        # BFCL's runner only leaves withheld functions out of the prompt; a call to one still executes on
        # the backend (a ground truth may call one before its turn: miss_func 49 calls ``tail`` at turn 1)
        self._withheld = {name: doc for name, doc in every.items() if name in excluded}
        self._tools = [data.tool_spec(d) for d in self._docs.values()] + [_END_TURN_TOOL]

    def _functions_text(self) -> str:
        lines = "\n".join(data.signature(d) for d in self._docs.values())
        return f"Available functions:\n{lines}"

    def _initial_observation(self) -> str:
        question = _user_text(self.entry["question"][0])
        return (
            f"{self._functions_text()}\n\nCall functions as [name(arg=value), ...] (Python, one line); "
            f"reply {data.END_TURN} when the user's request is done.\n\nUser: {question}"
        )

    # ------------------------------------------------------------------ dynamics
    def _transition(self, action: str) -> Transition:
        text = action.strip()
        if text in (data.END_TURN, f"{data.END_TURN}()"):
            return self._end_turn()
        try:
            calls = data.parse_calls(text)
        except data.CallSyntaxError as exc:
            return Transition(
                observation=f"Error: {exc}. Call functions as [name(arg=value), ...].", invalid=True
            )
        unknown = [c.name for c in calls if c.name not in self._docs and c.name not in self._withheld]
        if unknown:
            hint = did_you_mean(unknown[0], list(self._docs)) or "see the available functions"
            return Transition(observation=f"Error: no function named {unknown[0]!r} ({hint}).", invalid=True)
        sources = [c.source for c in calls]
        results = [str(r) for r in self._request({"op": "exec", "calls": sources}, "results")["results"]]
        self.model_calls[self.turn].append(sources)
        self._last_results = results
        for call, result in zip(calls, results, strict=False):
            if call.name == "cd" and not result.startswith("Error"):
                with contextlib.suppress(ValueError, AttributeError):
                    self.cwd = str(json.loads(result).get("current_working_directory", self.cwd))
        lines = [f"{source} -> {result}" for source, result in zip(sources, results, strict=False)]
        return Transition(observation="\n".join(lines))

    def _end_turn(self) -> Transition:
        if self.turn + 1 < len(self.ground_truth):
            self.turn += 1
            self._refresh_functions()
            message = _user_text(self.entry["question"][self.turn])
            added = (self.entry.get("missed_function") or {}).get(str(self.turn))
            note = f"New functions are available:\n{self._functions_text()}\n\n" if added else ""
            return Transition(observation=f"{note}User: {message or '(no new message)'}")
        verdict = self._request(
            {"op": "grade", "model": self.model_calls, "ground_truth": self.ground_truth}, "graded"
        )
        self.verdict = verdict
        success = bool(verdict.get("valid"))
        info = {
            "bfcl_error_type": verdict.get("error_type", ""),
            "bfcl_error": verdict.get("error_message", ""),
        }
        observation = "All requests handled." if success else "The conversation is over."
        return Transition(
            observation=observation,
            reward=float(success),
            done=True,
            success=success,
            score=float(success),
            info=info,
        )

    # ------------------------------------------------------------------ the gold replay
    def expert_action(self) -> str:
        made = sum(len(step) for step in self.model_calls[self.turn])
        gold = self.ground_truth[self.turn]
        return gold[made] if made < len(gold) else data.END_TURN

    def random_action(self, rng: random.Random) -> str:
        """Uniform over the scenario's ground-truth calls (all turns) and ``end_turn``: the random agent.

        BFCL has no finite action list; drawing from the right calls makes it a strong random baseline that
        only lacks their order and the turn boundaries."""
        return rng.choice([call for turn in self.ground_truth for call in turn] + [data.END_TURN])

    # ------------------------------------------------------------------ tool-calling protocol
    def tools(self) -> list[dict[str, Any]]:
        return list(self._tools)

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name == data.END_TURN:
            return data.END_TURN
        if not isinstance(arguments, Mapping):
            raise ValueError(f"arguments of {name} must be an object, got {arguments!r}")
        if not name.isidentifier():
            raise ValueError(f"{name!r} is not a function name")
        parts = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if str(k).isidentifier())
        return f"{name}({parts})"

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        if action.strip() in (data.END_TURN, f"{data.END_TURN}()"):
            return data.END_TURN, {}
        calls = data.parse_calls(action)
        if len(calls) != 1:
            raise ValueError(f"one tool call expresses one function call, got {len(calls)}")
        call = calls[0]
        doc = self._docs.get(call.name) or self._withheld.get(call.name, {})
        names = list(doc.get("parameters", {}).get("properties", {}))
        arguments = dict(zip(names, call.args, strict=False)) | call.kwargs
        return call.name, arguments

    # ------------------------------------------------------------------ hook views
    def runtime_state(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "turns": len(self.ground_truth),
            "calls_this_turn": [c for step in self.model_calls[self.turn] for c in step]
            if self.entry
            else [],
            "last_results": list(self._last_results),
            "available_functions": sorted(self._docs),
            "current_directory": self.cwd,
            "required_arguments": {
                name: list(doc.get("parameters", {}).get("required", [])) for name, doc in self._docs.items()
            },
        }

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task_type": self.task.task_type,
            "instruction": self.task.instruction,
            "entry_id": self.entry.get("id"),
            "category": self.category,
            "involved_classes": sorted(self.entry.get("involved_classes", [])),
        }

    def function_doc(self, name: str) -> dict[str, Any] | None:
        """The BFCL doc (JSON schema of parameters) of an available function, for detectors and operators."""
        return self._docs.get(name)
