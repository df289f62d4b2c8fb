"""Prose answers of a real db run graded as if committed: the right one counts, a wrong one does not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from reharness.core.types import ChatRequest
from reharness.envs.registry import make_env
from reharness.kits.db.prose_answers import prose_answers
from reharness.runtime import FunctionAgent, RunSpec, base_harness_config, run_batch
from reharness.runtime.harness import Harness


def test_prose_answers_are_graded_against_the_label(tmp_path: Path) -> None:
    env = make_env("db", split="test")
    spec = RunSpec(env="db", agent="scripted", n=4, seed=0)
    harness = Harness(base_harness_config("db").model_copy(update={"step_limit": 2}))

    def run(reply: Callable[[ChatRequest], str], out: Path) -> list[dict]:
        result = asyncio.run(run_batch(spec, FunctionAgent(reply, policy_id="prose"), harness, out))
        return prose_answers(Path(result.out))

    wrong = run(lambda request: "The answer is: no such value", tmp_path / "wrong")
    assert wrong and not any(r["right"] for r in wrong)  # every reply a prose answer, none right
    tasks = [env.task_by_id(i) for i in dict.fromkeys(r["task_id"] for r in wrong)]
    known = {t.state["description"]: str(t.gold["label"][0]) for t in tasks[::2] if len(t.gold["label"]) == 1}
    assert known

    def reply(request: ChatRequest) -> str:  # the label in prose for the tasks in `known`, else a wrong value
        prompt = "\n".join(m.content for m in request.messages)
        return "The answer to this question is: " + next((v for k, v in known.items() if k in prompt), "nope")

    rows = run(reply, tmp_path / "mixed")
    assert {r["step"] for r in rows} == {0, 1}
    for row in rows:
        assert row["right"] == (env.task_by_id(row["task_id"]).state["description"] in known)
    assert any(r["right"] for r in rows) and any(not r["right"] for r in rows)
