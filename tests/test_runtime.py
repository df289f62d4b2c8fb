"""The episode loop with real hooks on a real (tiny) environment."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from counter_env import CounterEnv

from reharness.core.types import ChatRequest, ChatResponse, ToolCall
from reharness.runtime import (
    CallableOverlay,
    EpisodeRunner,
    FunctionAgent,
    Harness,
    HarnessConfig,
    RandomAgent,
    SolverAgent,
    noop_overlay,
)
from reharness.store.records import infrastructure_error


def run(env: CounterEnv, agent: Any, harness: Harness, index: int = 0, seed: int = 7):
    task = env.generate_task("test", index)
    return asyncio.run(EpisodeRunner(env, agent, harness).run(task, seed=seed))


def replies(*texts: str) -> FunctionAgent:
    """An agent that answers with the given replies in turn (then 'Action: look')."""
    queue = list(texts)
    return FunctionAgent(lambda req: queue.pop(0) if queue else "Action: look", policy_id="scripted")


def base() -> Harness:
    return Harness(HarnessConfig(name="t", protocol="text"))


def test_solver_succeeds_and_records_every_step() -> None:
    env = CounterEnv(split="test")
    for i in range(20):
        rec = run(env, SolverAgent(), base(), index=i)
        assert rec.success and rec.termination == "success"
        assert rec.steps[-1].action == "submit"
        assert all(s.output is not None and s.output.text.startswith("Action: ") for s in rec.steps)
        assert rec.num_steps == len(rec.steps) == abs(env.task.state["target"] - env.task.state["start"]) + 1


def test_same_seed_same_trajectory_and_random_differs_by_seed() -> None:
    env = CounterEnv(split="test")
    a = run(env, RandomAgent(), base(), seed=1)
    b = run(env, RandomAgent(), base(), seed=1)
    c = run(env, RandomAgent(), base(), seed=2)
    assert a.digest_payload() == b.digest_payload()
    assert [s.action for s in a.steps] != [s.action for s in c.steps]


def test_format_error_is_data_and_counts_a_decision() -> None:
    env = CounterEnv(split="test")
    rec = run(env, replies("I am not sure what to do here.\nmaybe later", "Action: submit"), base())
    assert rec.steps[0].parse_error and "format_error" in rec.steps[0].flags
    assert rec.steps[0].action is None
    assert rec.steps[1].action == "submit"


def test_policy_exception_ends_episode_with_error_not_crash() -> None:
    def boom(req: ChatRequest) -> str:
        raise ConnectionError("server went away")

    rec = run(CounterEnv(split="test"), FunctionAgent(boom), base())
    assert rec.termination == "error" and "server went away" in (rec.error or "")
    assert "policy_error" in rec.steps[0].flags


def test_infrastructure_errors_are_told_apart_from_agent_failures() -> None:
    class Broken(CounterEnv):
        def _transition(self, action: str) -> Any:
            raise OSError("disk gone")

    env_failed = run(Broken(split="test"), replies("Action: inc"), base())
    assert env_failed.termination == "error" and "env_error" in env_failed.steps[-1].flags
    assert infrastructure_error(env_failed) == "env"
    policy_failed = run(
        CounterEnv(split="test"), FunctionAgent(lambda r: ChatResponse(error="HTTP 500")), base()
    )
    assert infrastructure_error(policy_failed) == "policy" and policy_failed.error == "policy error: HTTP 500"
    wrong = run(CounterEnv(split="test"), replies("Action: look", "Action: submit"), base())
    assert wrong.termination in ("terminated", "success") and infrastructure_error(wrong) is None


def test_step_limit_from_harness() -> None:
    harness = Harness(HarnessConfig(protocol="text", step_limit=3))
    rec = run(CounterEnv(split="test"), replies(), harness)
    assert rec.num_steps == 3 and rec.termination == "step_limit" and rec.steps[-1].truncated


def test_before_action_block_rewrite_force_and_chaining() -> None:
    seen: list[str] = []

    def rewrite_look(ctx: Any, nb: dict) -> Any:
        seen.append(ctx.action["text"])
        if ctx.action["text"] == "look":
            return {"type": "rewrite_action", "action": "inc"}
        return None

    def block_inc_twice(ctx: Any, nb: dict) -> Any:
        seen.append(ctx["action"]["text"])
        nb["incs"] = nb.get("incs", 0) + (ctx.action["text"] == "inc")
        if nb["incs"] >= 2 and ctx.action["text"] == "inc":
            return {"type": "block_and_prompt", "message": "Stop incrementing."}
        return None

    harness = base().with_overlays(
        CallableOverlay({"before_action": rewrite_look}, name="a"),
        CallableOverlay({"on_before_action": block_inc_twice}, name="b"),
    )
    rec = run(CounterEnv(split="test"), replies("Action: look", "Action: look"), harness)
    # the second overlay sees the action rewritten by the first
    assert seen[:4] == ["look", "inc", "look", "inc"]
    assert rec.steps[0].action == "inc" and "rewritten" in rec.steps[0].flags
    assert "blocked" in rec.steps[1].flags and rec.steps[1].action is None
    assert rec.steps[1].observation == "Stop incrementing."
    kinds = [e["kind"] for e in rec.steps[1].effects]
    assert kinds == ["rewrite", "block"]


def test_after_feedback_hint_and_force_next_action() -> None:
    calls: list[int] = []

    def post(ctx: Any, nb: dict) -> Any:
        calls.append(ctx.step)
        if ctx.step == 1:
            return {"type": "force_action", "action": "submit"}
        return {"type": "inject_hint", "message": "keep going"}

    prompts: list[ChatRequest] = []

    def agent(req: ChatRequest) -> str:
        prompts.append(req)
        return "Action: look"

    harness = base().with_overlays(CallableOverlay({"after_feedback": post}))
    rec = run(CounterEnv(split="test"), FunctionAgent(agent), harness)
    assert rec.steps[1].source == "hook" and rec.steps[1].action == "submit"
    assert len(prompts) == 1  # the forced step did not ask the policy
    assert rec.termination in ("success", "terminated")


def test_init_and_before_decision_add_context() -> None:
    captured: list[ChatRequest] = []

    def agent(req: ChatRequest) -> str:
        captured.append(req)
        return "Action: submit"

    overlay = CallableOverlay(
        {
            "on_init": lambda ctx, nb: {"skills": [{"text": "Count carefully."}]},
            "make_pre_hint": lambda ctx, nb: {"message": f"{ctx.remaining_steps} steps left"},
        }
    )
    run(CounterEnv(split="test"), FunctionAgent(agent), base().with_overlays(overlay))
    system = captured[0].messages[0].content
    assert "Count carefully." in system
    assert "12 steps left" in captured[0].messages[-1].content


def test_hook_errors_and_invalid_effects_are_recorded_without_effect() -> None:
    def crash(ctx: Any, nb: dict) -> Any:
        return 1 / 0

    def garbage(ctx: Any, nb: dict) -> Any:
        return {"type": "launch_missiles"}

    def mutate(ctx: Any, nb: dict) -> Any:
        ctx.observation = "hacked"

    harness = base().with_overlays(
        CallableOverlay({"before_action": crash, "after_feedback": mutate}, name="crashy"),
        CallableOverlay({"before_action": garbage}, name="garbage"),
    )
    rec = run(CounterEnv(split="test"), SolverAgent(), harness)
    assert rec.success  # the hooks had no effect
    errors = rec.steps[0].hook_errors
    assert {e.error_type for e in errors} == {"runtime_error", "invalid_effect"}
    assert any("ZeroDivisionError" in e.message for e in errors)
    assert any("read-only" in e.message for e in rec.steps[0].hook_errors + rec.steps[1].hook_errors)


def test_env_that_does_not_honour_effects_drops_them() -> None:
    class StrictEnv(CounterEnv):
        honoured_effects = frozenset({"block", "hint"})

    harness = base().with_overlays(
        CallableOverlay({"before_action": lambda ctx, nb: {"type": "force_action", "action": "submit"}})
    )
    rec = run(StrictEnv(split="test"), replies("Action: look"), harness)
    assert rec.steps[0].action == "look"
    assert rec.steps[0].dropped_effects and "does not honour" in rec.steps[0].dropped_effects[0]["reason"]


def test_forced_action_must_be_admissible_when_env_says_so() -> None:
    class AdmissibleEnv(CounterEnv):
        restrict_forced_to_admissible = True

    harness = base().with_overlays(
        CallableOverlay({"before_action": lambda ctx, nb: {"type": "rewrite_action", "action": "jump 3"}})
    )
    rec = run(AdmissibleEnv(split="test"), replies("Action: look"), harness)
    assert rec.steps[0].action == "look"
    assert rec.steps[0].dropped_effects[0]["reason"] == "forced/rewritten action is not admissible"


def test_noop_overlay_changes_nothing_but_identity() -> None:
    env = CounterEnv(split="test")
    plain = run(env, SolverAgent(), base())
    hooked_harness = base().with_overlays(noop_overlay())
    hooked = run(env, SolverAgent(), hooked_harness)
    assert plain.digest_payload() == hooked.digest_payload()
    assert plain.harness_id != hooked.harness_id


def test_tools_protocol_round_trip() -> None:
    class ToolEnv(CounterEnv):
        def tools(self) -> list[dict[str, Any]]:
            return [{"type": "function", "function": {"name": "act", "parameters": {"type": "object"}}}]

        def action_from_tool_call(self, name: str, arguments: Any) -> str:
            if name != "act":
                raise ValueError("unknown tool")
            return str(arguments["command"])

        def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
            return "act", {"command": action}

    harness = Harness(HarnessConfig(protocol="tools"))
    rec = run(ToolEnv(split="test"), SolverAgent(), harness)
    assert rec.success and rec.steps[0].output is not None and rec.steps[0].output.tool_calls[0].name == "act"
    bad = FunctionAgent(lambda req: ChatResponse(tool_calls=(ToolCall(name="fly", arguments={}),)))
    rec = run(ToolEnv(split="test"), bad, Harness(HarnessConfig(protocol="tools", step_limit=2)))
    assert "format_error" in rec.steps[0].flags and "fly" in (rec.steps[0].parse_error or "")


@pytest.mark.parametrize("window", [0, 2])
def test_history_window_keeps_head(window: int) -> None:
    captured: list[ChatRequest] = []

    def agent(req: ChatRequest) -> str:
        captured.append(req)
        return "Action: look"

    harness = Harness(
        HarnessConfig(protocol="text", system_prompt="Be brief.", history_window=window, step_limit=6)
    )
    run(CounterEnv(split="test"), FunctionAgent(agent), harness)
    last = captured[-1].messages
    assert last[0].role == "system" and "Your task is to" in last[1].content
    expected = 2 + (2 * window if window else 2 * 5)
    assert len(last) == expected


def test_a_reharness_error_survives_pickling_with_its_hint() -> None:
    """Errors raised in a Ray actor reach the driver pickled: message, hint and code are kept."""
    import pickle

    from reharness.core.errors import ConfigError
    from reharness.runtime.ray_actors import RayExecutorError

    for error in (ConfigError("bad", hint="fix it"), RayExecutorError("gone", hint="rerun", code="x")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error)
        assert (back.message, back.hint, back.code) == (error.message, error.hint, error.code)
