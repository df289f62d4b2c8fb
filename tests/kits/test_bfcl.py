"""BFCL kit: conformance, gold replay 200/200, the official checker agrees, no leaks, calls stay confined."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from reharness.envs import check_env, make_env
from reharness.kits.bfcl import data
from reharness.kits.bfcl.env import BfclEnv


@pytest.fixture(scope="module")
def env(need_bfcl: None) -> Iterator[BfclEnv]:
    built = make_env("bfcl", split="train")
    yield built
    built.close()


def play(env: BfclEnv, index: int, actions: list[str] | None = None) -> dict:
    """Play ``actions`` (the gold replay when None) and return the last info."""
    env.reset(options={"task": index})
    queue = list(actions) if actions is not None else None
    while True:
        action = env.expert_action() if queue is None else (queue.pop(0) if queue else data.END_TURN)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info


def gold_actions(env: BfclEnv, index: int) -> list[str]:
    env.reset(options={"task": index})
    actions = []
    for turn in env.ground_truth:
        actions += [*turn, data.END_TURN]
    return actions


def test_conformance(env: BfclEnv) -> None:
    assert check_env(env) == []


def test_split_is_by_scenario_and_covers_all_200(env: BfclEnv) -> None:
    numbers = {
        s: {data.scenario_number(env.generate_task(s, i).state["entry_id"]) for i in range(n)}
        for s, n in ((s, len(env._by_split[s])) for s in ("train", "valid", "test"))
    }
    assert sum(len(v) for v in numbers.values()) == 200
    assert not (numbers["train"] & numbers["test"]) and not (numbers["valid"] & numbers["test"])
    for category in data.CATEGORIES:  # the variants of a scenario fall in its split
        for entry, _ in data.load_category(category)[:20]:
            number = data.scenario_number(entry["id"])
            assert number in numbers[data.split_of_scenario(number)]


def test_gold_replay_scores_200_of_200(need_bfcl: None) -> None:
    wins = 0
    for split in ("train", "valid", "test"):
        env = make_env("bfcl", split=split)
        try:
            wins += sum(bool(play(env, i)["success"]) for i in range(env.num_tasks()))
        finally:
            env.close()
    assert wins == 200


def _official_verdict(env: BfclEnv, model_calls: list[list[list[str]]]) -> bool:
    """BFCL's multi_turn_checker run directly (trusted test code on recorded strings), for comparison."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    verdict = multi_turn_checker(
        model_calls, env.ground_truth, env.entry, "multi_turn_base", f"test_{os.getpid()}"
    )
    return bool(verdict["valid"])


def test_checker_agrees_with_the_kit_on_a_correct_and_a_wrong_trajectory(env: BfclEnv) -> None:
    correct = gold_actions(env, 0)
    info = play(env, 0, correct)
    assert info["success"] and _official_verdict(env, env.model_calls) is True
    wrong = [a for a in correct if a != correct[0]]  # drop the first gold call
    info = play(env, 0, wrong)
    assert not info["success"] and info["bfcl_error_type"].startswith("multi_turn:")
    assert _official_verdict(env, env.model_calls) is False


def test_no_state_leaks_between_episodes_of_one_scenario(env: BfclEnv) -> None:
    index = next(
        i for i in range(env.num_tasks()) if "GorillaFileSystem" in env.generate_task("train", i).task_type
    )
    env.reset(options={"task": index})
    _, _, _, _, _ = env.step("ls(a=True)")
    before = env._last_results
    env.step("mkdir(dir_name='leaked_dir')")
    env.step("touch(file_name='leaked_file.txt')")
    env.reset(options={"task": index})
    env.step("ls(a=True)")
    assert env._last_results == before and "leaked" not in env._last_results[0]
    assert play(env, index)["success"]  # and the gold replay still scores after a dirty episode


def test_bad_calls_never_reach_the_backends(env: BfclEnv) -> None:
    env.reset(options={"task": 0})
    for hostile in (
        "__import__('os').system('touch /tmp/pwned')",
        "os.system('id')",
        "ls(a=open('/etc/passwd'))",
        "[ls() for _ in range(9)]",
        "import os",
    ):
        obs, _, terminated, _, info = env.step(hostile)
        assert info["invalid_action"] and not terminated and obs.startswith("Error:"), hostile
    obs, *_, info = env.step("no_such_function(x=1)")
    assert info["invalid_action"] and "no function named" in obs
    assert not os.path.exists("/tmp/pwned")
    assert env._worker.caps["pid"] != os.getpid()  # the official code runs in another, confined process


def test_tool_calls_round_trip(env: BfclEnv) -> None:
    env.reset(options={"task": 0})
    names = {t["function"]["name"] for t in env.tools()}
    assert data.END_TURN in names and all(
        t["function"]["parameters"]["type"] == "object" for t in env.tools()
    )
    gold = env.ground_truth[0][0]
    name, arguments = env.tool_call_from_action(gold)
    assert data.parse_calls(env.action_from_tool_call(name, arguments))[0].name == name
    assert env.action_from_tool_call(data.END_TURN, {}) == data.END_TURN


def test_a_withheld_function_executes_as_in_bfcls_runner(need_bfcl: None) -> None:
    """miss_func 49's ground truth calls ``tail`` at turn 1, while ``tail`` is withheld until turn 3: BFCL's
    runner only leaves it out of the prompt, so the call executes; the kit does the same, without offering
    it."""
    env = make_env("bfcl", split="train", category="miss_func")
    try:
        index = next(
            i
            for i in range(env.num_tasks())
            if env.generate_task("train", i).state["entry_id"].endswith("_49")
        )
        env.reset(options={"task": index})
        assert "tail" not in {t["function"]["name"] for t in env.tools()}
        assert play(env, index)["success"]
        env.reset(options={"task": index})
        _, _, _, _, info = env.step("nonexistent_call(x=1)")
        assert info["invalid_action"]  # a function no involved class has is still refused
    finally:
        env.close()
