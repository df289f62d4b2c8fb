"""The hint-following probe: an agent that does what a hint names is told apart from one that ignores it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from targets import ClumsySolver

from reharness.core.types import ChatRequest, ChatResponse
from reharness.experiments.r1_probe import MARK, hint_probe
from reharness.experiments.r1_stages import R1Config
from reharness.runtime.agents import SCRIPTED_AGENTS, Agent
from reharness.runtime.protocols import render_action


class HintFollower(ClumsySolver):
    """The clumsy target, except that it takes the action a hint names when its prompt carries one."""

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return HintFollower(env, protocol, self.calls)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        if MARK in text:
            return render_action(self.protocol, text.split(MARK, 1)[1].splitlines()[0].strip(), self.env)
        return await super().complete(request)


@pytest.mark.parametrize(("agent", "follows"), [(HintFollower, True), (ClumsySolver, False)])
def test_the_probe_measures_whether_the_target_takes_the_hinted_action(
    agent: type[ClumsySolver], follows: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", agent)
    config = R1Config(
        envs=["household"], agent="clumsy", out=str(tmp_path), test_batches=1, batch_size=4, max_steps=8,
        batch_concurrency=1,
    )  # fmt: skip
    probe = hint_probe(config, agents={"household": agent()})["household"]
    assert probe["hinted_steps"] > 0
    if follows:
        assert probe["followed_frac"] == 1.0 > probe["baseline_frac"]
    else:
        assert probe["followed_frac"] < 0.5
