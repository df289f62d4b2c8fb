"""A Harness-R1 ``ctx`` for ``bfcl``, shaped like the official DBBench one (spec §2.3).

Harness-R1 has no BFCL benchmark. Its DBBench task is the nearest in shape — an agent that calls tools on a
stateful backend and is graded on the final state — so this ctx has DBBench's five keys and conventions:
``action`` (the proposed calls), ``state`` (counters and streaks), ``task``, a benchmark key ``bfcl`` (the
call history and the backend's answer) and ``predicates``; no ``observation`` key. Hooks fire as DBBench's:
``on_before_action`` only for a reply that is function calls or ``end_turn``, ``on_post_step`` only after
executed function calls. Unlike DBBench (which ignores them), a ``rewrite_action`` / ``force_action``
replaces the calls to execute — a call string in BFCL's format — since BFCL calls can be repaired
(reharness's effect engine applies them). Patches for it name the benchmark ``bfcl``; nothing here is
Harness-R1's own (say so when comparing with its numbers).

Everything is read from what the agent was shown and from the environment's observable state
(``runtime_state``: available functions and their required arguments, the current directory, the turn) —
never from the ground truth. Calls are parsed with the kit's :func:`~reharness.kits.bfcl.data.parse_calls`
(``ast``, literal arguments only), as the environment does.
"""

from __future__ import annotations

from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.kits.bfcl import data
from reharness.kits.bfcl.failures import argument_problems
from reharness.runtime.r1.adapter import Proposal, R1Adapter

#: How the environment answers a call that failed (its own errors and the backends').
ERROR_PREFIX = "error"


def _parse(action: str | None) -> tuple[str, list[data.Call]]:
    """``(tool, calls)``: ``end_turn``, the first call's name with every call, or ``""`` for neither."""
    text = (action or "").strip()
    if text in (data.END_TURN, f"{data.END_TURN}()"):
        return data.END_TURN, []
    try:
        calls = data.parse_calls(text)
    except data.CallSyntaxError:
        return "", []
    return (calls[0].name, calls) if calls else ("", [])


def _failed(result: str) -> bool:
    low = result.strip().lower()
    return low.startswith(ERROR_PREFIX) or '"error"' in low[:40]


class BfclAdapter(R1Adapter):
    """DBBench's ctx shape over a BFCL multi-turn episode (see the module docstring)."""

    benchmark = "bfcl"

    def __init__(self, env: TextEnvLike, max_steps: int) -> None:
        super().__init__(env, max_steps)
        fields = env.task_fields()
        self.task = {
            "category": str(fields.get("category") or "base"),
            "involved_classes": list(fields.get("involved_classes") or []),
            "description": str(fields.get("instruction") or ""),
        }
        self.history: list[str] = []  # every call that reached the backends (its source), in order
        self.state: dict[str, Any] = {
            "call_count": 0,
            "last_calls": [],
            "last_result": "",
            "last_result_was_error": False,
            "error_streak": 0,
            "text_only_streak": 0,
            "loop_streak": 0,
            "end_turns": 0,
        }

    def fires(self, hook: str, action: str | None) -> bool:
        tool = _parse(action)[0]
        if hook == "on_before_action":
            return bool(tool)
        if hook == "on_post_step":
            return bool(tool) and tool != data.END_TURN
        return True

    def no_action(self, shown: str) -> None:
        self.state["text_only_streak"] += 1

    def acted(self, action: str) -> None:
        if _parse(action)[0]:
            self.state["text_only_streak"] = 0

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        super().executed(action, observation, info)
        tool, calls = _parse(action)
        s = self.state
        if tool == data.END_TURN:
            s["end_turns"] += 1
            return
        if not tool:
            s["text_only_streak"] += 1  # as DBBench: a turn without a (rescued) tool call
            return
        sources = [c.source for c in calls]
        s["loop_streak"] = s["loop_streak"] + 1 if s["last_calls"] == sources else 0
        refused = bool(info.get("invalid_action"))  # an unknown function: nothing reached the backends
        if not refused:
            self.history += sources
        error = refused or any(_failed(line.split(" -> ", 1)[-1]) for line in observation.splitlines())
        s.update(call_count=len(self.history), last_calls=sources, last_result=observation)
        s["last_result_was_error"] = error
        s["error_streak"] = s["error_streak"] + 1 if error else 0

    def _runtime(self) -> dict[str, Any]:
        state = getattr(self.env, "runtime_state", None)
        return dict(state()) if callable(state) else {}

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        runtime = self._runtime()
        available = list(runtime.get("available_functions") or [])
        tool, calls = "", list[data.Call]()
        if hook in ("on_before_action", "on_post_step") and proposal is not None:
            tool, calls = _parse(proposal.final or proposal.action)
        doc_of = getattr(self.env, "function_doc", None)
        unknown = [c.name for c in calls if c.name not in available]
        problems = [
            p
            for c in calls
            if c.name in available and callable(doc_of)
            for p in argument_problems(c, doc_of(c.name) or {})
        ]
        remaining = self.remaining(hook, step)
        turn_calls = list(runtime.get("calls_this_turn") or [])
        state = dict(
            self.state,
            remaining_rounds=remaining,
            turn=int(runtime.get("turn", 0)),
            turns=int(runtime.get("turns", 1)),
            calls_this_turn=len(turn_calls),
            current_directory=str(runtime.get("current_directory") or ""),
        )
        sources = [c.source for c in calls]
        return {
            "action": {
                "tool": tool,
                "calls": [{"name": c.name, "args": list(c.args), "kwargs": dict(c.kwargs)} for c in calls],
                "source": ", ".join(sources),
                "unknown_functions": unknown,
                "argument_problems": problems,
            },
            "state": state,
            "task": dict(self.task),
            "bfcl": {
                "available_functions": available,
                "required_arguments": dict(runtime.get("required_arguments") or {}),
                "call_history": list(self.history),
                "calls_this_turn": turn_calls,
                "backend_response": self.observation if hook == "on_post_step" else "",
                "round": 0 if hook == "on_init" else step + 1,
            },
            "predicates": {
                "function_call": bool(calls),
                "end_turn": tool == data.END_TURN,
                "end_turn_without_call": tool == data.END_TURN and not turn_calls,
                "unknown_function": bool(unknown),
                "argument_problem": bool(problems),
                "last_result_error": state["last_result_was_error"],
                "repeated_call": bool(sources) and sources == self.state["last_calls"]
                if hook == "on_before_action"
                else state["loop_streak"] > 0,
                "cd_used": any(s.startswith("cd(") for s in self.history),
                "remaining_rounds_low": remaining <= 3,
                "text_only_loop": state["text_only_streak"] >= 2,
            },
        }
