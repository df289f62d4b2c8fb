"""Harness configs, effect schema, protocols and check_env on a user environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from counter_env import CounterEnv

from reharness.core.errors import ConfigError
from reharness.core.types import ChatResponse
from reharness.envs.check import EnvCheckError, check_env
from reharness.runtime import EffectError, Harness, parse_effect
from reharness.runtime.harness import base_harness_config, load_harness_config
from reharness.runtime.protocols import parse_action, render_action


@pytest.mark.parametrize("env", ["household", "shop", "db"])
def test_base_harnesses_load(env: str) -> None:
    config = base_harness_config(env)
    assert config.env == env
    # db's task prompt is AgentBench's own first user turn (in the observation), so it has no system prompt
    assert bool(config.system_prompt) == (env != "db")
    assert Harness(config).identity == Harness(base_harness_config(env)).identity


def test_yaml_overrides_base_and_changes_identity(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("name: short-history\nhistory_window: 3\nstep_limit: 30\n")
    config = load_harness_config(path, "household")
    assert config.history_window == 3 and config.protocol == "text" and not config.show_admissible
    assert Harness(config).identity != Harness(base_harness_config("household")).identity


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("history_window: -1\n", "history_window"),
        ("protocol: telepathy\n", "protocol"),
        ("colour: blue\n", "colour"),
        ("feedback_template: 'Obs: {obs}'\n", "unknown template field {obs}"),
        ("- a\n- b\n", "must hold a mapping"),
        ("name: [unclosed\n", "not valid YAML"),
        ("env: shop\n", "harness for env 'shop'"),
    ],
)
def test_bad_harness_yaml_gets_clear_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_harness_config(path, "household")
    assert fragment in str(info.value)


def test_missing_harness_file() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_harness_config("/nonexistent/h.yaml", "db")


def test_effect_schema() -> None:
    assert parse_effect("on_post_step", {"type": "inject_hint", "message": "x"}).kind == "hint"
    assert parse_effect("before_action", None) is None
    assert parse_effect("on_init", {"skills": [{"text": "a"}, "b"], "tool_hint": "c"}).skills == (
        "a",
        "b",
        "c",
    )
    with pytest.raises(EffectError, match="before_decision may return|unknown keys"):
        parse_effect("before_decision", {"type": "force_action", "action": "x"})
    with pytest.raises(EffectError, match="after_feedback"):
        parse_effect("after_feedback", {"type": "rewrite_action", "action": "x"})
    with pytest.raises(EffectError, match="limit is 900"):
        parse_effect("before_decision", {"message": "x" * 901})
    with pytest.raises(EffectError, match="at most 5"):
        parse_effect("on_init", {"skills": ["s"] * 6})
    with pytest.raises(EffectError, match="unknown hook"):
        parse_effect("on_everything", {})
    with pytest.raises(EffectError, match="returned str"):
        parse_effect("before_action", "block")


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("Think: go\nAction: go to cabinet 1", "go to cabinet 1"),
        ("ACTION:  open drawer 2 ", "open drawer 2"),
        ("Action: look\nAction: inventory", "inventory"),
        ("> take apple 1 from table 1", "take apple 1 from table 1"),
        ("search[red shoes]", "search[red shoes]"),
    ],
)
def test_text_protocol(text: str, action: str) -> None:
    assert parse_action("text", ChatResponse(text=text), None).action == action


def test_text_protocol_errors_and_render_round_trip() -> None:
    assert parse_action("text", ChatResponse(text=""), None).error == "empty reply"
    assert parse_action("text", ChatResponse(text="Think: hmm\nstill thinking"), None).action is None
    rendered = render_action("text", "go to sofa 1", None, thought="look there")
    assert parse_action("text", rendered, None).action == "go to sofa 1"
    assert parse_action("raw", ChatResponse(text="  Action: Answer\nFinal Answer: []  "), None).action == (
        "Action: Answer\nFinal Answer: []"
    )


def test_check_env_accepts_a_good_env_and_explains_a_bad_one() -> None:
    assert check_env(CounterEnv(split="test")) == []

    class Unseeded(CounterEnv):
        calls = 0

        def _initial_observation(self) -> str:
            Unseeded.calls += 1
            return f"call {Unseeded.calls}"

    with pytest.raises(EnvCheckError, match="same seed 0 and actions gave different observations"):
        check_env(Unseeded(split="test"))

    class NoInfo(CounterEnv):
        def reset(self, *, seed=None, options=None):  # type: ignore[override]
            obs, info = super().reset(seed=seed, options=options)
            del info["task_identity"]
            return obs, info

    with pytest.raises(EnvCheckError, match=r"lacks keys \['task_identity'\]"):
        check_env(NoInfo(split="test"))
