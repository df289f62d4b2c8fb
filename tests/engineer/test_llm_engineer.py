"""The prompted engineer end to end against the local OpenAI-compatible server with scripted replies.

The server (``reharness.models.server.ChatServer``) serves a scripted agent that answers by the request's
seed, so each of the engineer's concurrent requests gets a known reply: a valid patch, one that imports a
forbidden module, one that copies a numbered object instance from the traces, one for another benchmark, a
reply with no patch tag, a truncated one — plus HTTP faults. Each must come back as a proposal with the right
error code, never as an exception.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from proposer_helpers import packet_of, random_packet, sloppy_household

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.types import ChatRequest
from reharness.engineer import LLMEngineer, OperatorEngineer, Proposal, error_counts, make_engineer
from reharness.engineer.prompts import EXAMPLE_CODE, build_messages, example_patch, system_prompt
from reharness.failures import FailurePacket, render_packet
from reharness.models.server import ChatServer, Fault, ServerThread
from reharness.patches import Patch, validate_patch
from reharness.runtime import CallableOverlay, FunctionAgent, RandomAgent
from reharness.runtime.view import thaw

GOOD_CODE = (
    "def hook(ctx, nb):\n"
    "    counters = ctx.get('counters') or {}\n"
    "    if (counters.get('invalid_streak') or 0) == 0:\n"
    "        return None\n"
    "    options = list(ctx.get('admissible') or [])[:5]\n"
    "    return {'type': 'inject_hint', 'message': 'Not valid here. Try one of: ' + '; '.join(options)}\n"
)


def reply(code: str, benchmark: str = "alfworld", think: str = "Invalid actions recur.") -> str:
    patch = {
        "schema_version": "harness-r1-patch-v1",
        "benchmark": benchmark,
        "description": "hint after invalid actions",
        "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": code}],
    }
    return f"<think>{think}</think>\n<patch>{json.dumps(patch)}</patch>"


class Scripted:
    """A served agent answering by request seed; it keeps every request it was sent."""

    def __init__(self) -> None:
        self.by_seed: dict[int, str] = {}
        self.requests: list[ChatRequest] = []

    def __call__(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return self.by_seed.get(request.seed, "no scripted reply for this seed")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[ChatServer, Scripted]]:
    script = Scripted()
    thread = ServerThread(ChatServer(FunctionAgent(script), model_name="scripted"))
    thread.start()
    yield thread.server, script
    thread.stop()


@pytest.fixture(scope="module")
def packet() -> FailurePacket:
    return packet_of("household", [sloppy_household()])


def engineer_for(server: ChatServer, **options: Any) -> LLMEngineer:
    spec = f"llm:openai:scripted@{server.base_url}"
    backend = {"max_retries": 0, "timeout_s": 5.0, "backoff_base_s": 0.01}
    engineer = make_engineer(spec, **(backend | options))
    assert isinstance(engineer, LLMEngineer) and engineer.name == spec
    return engineer


def propose(engineer: LLMEngineer, packet: FailurePacket, n: int, seed: int) -> list[Proposal]:
    async def go() -> list[Proposal]:
        try:
            return await engineer.propose(packet, n, seed)
        finally:
            await engineer.close()

    return asyncio.run(go())


def test_scripted_replies_become_proposals_with_error_codes(
    served: tuple[ChatServer, Scripted], packet: FailurePacket
) -> None:
    server, script = served
    instance = packet.leakage.object_instances[0]  # e.g. "cabinet 3", seen in the traces
    replies = [
        reply(GOOD_CODE),
        reply("import os\n\n" + GOOD_CODE),
        reply(GOOD_CODE.replace("'Not valid here. ", f"'Go to {instance} first. ")),
        reply(GOOD_CODE, benchmark="webshop"),
        "I think the agent should try harder.",
        '<think>Plan.</think><patch>{"schema_version": "harness-r1-patch-v1", "bench',
        '<think>Plan.</think><patch>{"schema_version": "harness-r1-patch-v1", "actions": [}</patch>',
    ]
    engineer = engineer_for(server)
    requests = engineer.requests(packet, len(replies), seed=7)
    script.by_seed.update({r.seed: text for r, text in zip(requests, replies, strict=True)})
    script.requests.clear()
    proposals = propose(engineer, packet, len(replies), seed=7)

    assert [p.error_code for p in proposals] == [
        None,
        "forbidden_import",
        "leakage",
        "wrong_env",
        "no_patch_tag",
        "unterminated_patch_tag",
        "invalid_json",
    ]
    assert [p.raw_reply for p in proposals] == replies  # kept verbatim, valid or not
    good = proposals[0]
    assert good.valid and good.patch is not None and good.error is None
    assert good.patch.env == "household" and good.patch.hooks["after_feedback"] == GOOD_CODE
    assert good.patch.metadata["engineer"] == engineer.name and good.meta["temperature"] == 0.7
    assert instance in (proposals[2].error or "") and "os" in (proposals[1].error or "")
    assert all(p.patch is None and p.error for p in proposals[1:])
    assert error_counts(proposals) == {
        "forbidden_import": 1,
        "invalid_json": 1,
        "leakage": 1,
        "no_patch_tag": 1,
        "unterminated_patch_tag": 1,
        "wrong_env": 1,
    }
    # what the server received: distinct seeds, the sampling settings, the prompt and the packet
    assert sorted(r.seed for r in script.requests) == sorted(r.seed for r in requests)
    assert len({r.seed for r in requests}) == len(replies)
    sent = script.requests[0]
    assert sent.sampling.temperature == 0.7 and sent.sampling.top_p == 0.95
    assert sent.messages[0].content == system_prompt("household")
    assert sent.messages[1].content.startswith(render_packet(packet))


def test_http_faults_cost_only_their_proposal(
    served: tuple[ChatServer, Scripted], packet: FailurePacket
) -> None:
    server, script = served
    engineer = engineer_for(server, concurrency=1)
    requests = engineer.requests(packet, 3, seed=11)
    script.by_seed.update({r.seed: reply(GOOD_CODE) for r in requests})
    server.faults.extend([Fault("status", 500), Fault("malformed")])
    proposals = propose(engineer, packet, 3, seed=11)
    assert [p.error_code for p in proposals] == ["backend_error", "backend_error", None]
    assert "HTTP 500" in (proposals[0].error or "") and proposals[2].valid
    assert all(p.meta["request_seed"] == r.seed for p, r in zip(proposals, requests, strict=True))


def test_an_unreachable_server_gives_failed_proposals_not_an_exception(packet: FailurePacket) -> None:
    engineer = make_engineer("llm:openai:none@http://127.0.0.1:9/v1", max_retries=0, timeout_s=2.0)
    assert isinstance(engineer, LLMEngineer)
    proposals = propose(engineer, packet, 2, seed=0)
    assert [p.error_code for p in proposals] == ["backend_error", "backend_error"]


OPTION_FIELDS = ("attributes", "options")


def real_ctx_keys(env: str) -> set[str]:
    """Top-level and ``state``/``task`` keys of the ctx hooks really receive in an episode."""
    seen: list[dict[str, Any]] = []

    def capture(ctx: Any, nb: dict[str, Any]) -> None:
        seen.append(thaw(ctx))

    overlay = CallableOverlay({"before_action": capture, "after_feedback": capture})
    record = episode_with_overlay(env, overlay)
    assert record.num_steps and seen
    keys = {k for data in seen for k in data}
    keys |= {
        f"{k}.{sub}"
        for data in seen
        for k in ("state", "task")
        if isinstance(data.get(k), dict)
        for sub in data[k]
    }
    return keys


def episode_with_overlay(env_name: str, overlay: CallableOverlay) -> Any:
    from reharness.envs.registry import make_env
    from reharness.runtime import EpisodeRunner, Harness

    env = make_env(env_name, split="test")
    try:
        harness = Harness.base(env_name).with_overlays(overlay)
        return asyncio.run(EpisodeRunner(env, RandomAgent(), harness).run(env.get_task(0), 0))
    finally:
        env.close()


@pytest.mark.parametrize("env", ["household", "shop", "db"])
def test_prompt_names_the_real_ctx_fields_and_the_rules(env: str) -> None:
    prompt = system_prompt(env)
    for key in real_ctx_keys(env):
        if env == "shop" and key.startswith("task.required_") and key.rsplit("_", 1)[1] not in OPTION_FIELDS:
            continue  # shop's required_<option group> fields vary by task
        assert f"- ctx.{key}:" in prompt, key
    for hook in ("on_init", "make_pre_hint", "on_before_action", "on_post_step"):
        assert f"- {hook} (" in prompt
    assert "difflib" in prompt and "isinstance" in prompt and "except Exception:" in prompt
    honours = "honours only these effects: block, context, hint, message"
    assert (honours in prompt) == (env == "db")
    assert ("not in ctx.admissible are dropped" in prompt) == (env == "household")
    example = Patch.from_dict(example_patch(env))
    assert example.hooks["after_feedback"] == EXAMPLE_CODE and validate_patch(example) == []
    messages = build_messages(random_packet(env))
    assert [m.role for m in messages] == ["system", "user"] and messages[0].content == prompt


def test_engineer_specs() -> None:
    engineer = make_engineer("llm:tiny:household-S")
    assert isinstance(engineer, LLMEngineer) and engineer.spec == "tiny:household-S"
    assert engineer._backend is None  # nothing is loaded before the first proposal
    assert isinstance(make_engineer("operators"), OperatorEngineer)
    with pytest.raises(UnknownNameError) as err:
        make_engineer("operator")
    assert "operators" in (err.value.hint or "")
    with pytest.raises(UnknownNameError, match="names no model backend"):
        make_engineer("llm:")
    with pytest.raises(UnknownNameError, match="unknown engineer"):
        make_engineer("gpt-4o")


def test_engineer_registry_resolves_aliases_prefixes_and_lists_every_spec(tmp_path: Path) -> None:
    from reharness.engineer.factory import ENGINEERS, check_engineer_spec
    from reharness.engineer.operators.registry import LENIENT

    assert check_engineer_spec("self_refine") == ("self-refine", "")  # an alias
    assert check_engineer_spec(" operators+lenient ") == ("operators", "lenient")
    assert check_engineer_spec("llm:tiny:household-S") == ("llm", "tiny:household-S")
    assert check_engineer_spec(f"hf:{tmp_path}") == ("llm", f"hf:{tmp_path}")  # hf:PATH is llm:hf:PATH
    lenient = make_engineer("operators+lenient")
    assert isinstance(lenient, OperatorEngineer) and set(LENIENT) <= set(lenient.operators)
    assert not set(LENIENT) & set(make_engineer("operators").operators)
    with pytest.raises(UnknownNameError) as err:
        make_engineer("self-refin")
    assert err.value.message == "unknown engineer 'self-refin'"
    assert "did you mean 'self-refine'" in err.value.hint
    # help texts list what the registry accepts
    assert ENGINEERS.describe() == "operators, operators+lenient, self-refine, llm:BACKEND or hf:PATH"


def test_program_replies_that_fail_the_static_checks_are_resampled(
    served: tuple[ChatServer, Scripted], packet: FailurePacket
) -> None:
    """A repair-program engineer samples again (fresh seed) while a reply does not compile; greedy
    decoding and ``resample_invalid=0`` keep the first reply; a reply that never compiles stops after
    1 + N tries."""
    from reharness.core.hashing import derive_seed
    from reharness.engineer.compact import PromptStyle

    server, script = served
    style = PromptStyle(kind="compact", language="program")
    first = derive_seed("llm-engineer", 5, 0) & 0x7FFF_FFFF
    second = derive_seed("llm-engineer", 5, 0, 1) & 0x7FFF_FFFF
    script.by_seed[first] = "<program>snap_to_admissible(repeats=3)</program>"  # no such parameter
    script.by_seed[second] = "<program>snap_to_admissible(cutoff=0.7)</program>"

    def one(**options: Any) -> Proposal:
        engineer = engineer_for(server, prompt_style=style, **options)
        try:
            return asyncio.run(engineer.propose(packet, 1, seed=5))[0]
        finally:
            asyncio.run(engineer.close())

    kept = one(temperature=0.7)
    assert kept.valid and kept.meta["attempts"] == 2 and kept.meta["rejected"] == ["bad_param"]
    assert kept.patch is not None
    assert kept.patch.metadata["program"].startswith("snap_to_admissible(cutoff=0.7")
    for options in ({"temperature": 0.7, "resample_invalid": 0}, {"temperature": 0.0}):
        plain = one(**options)
        assert not plain.valid and plain.error_code == "bad_param" and plain.meta["attempts"] == 1
    del script.by_seed[second]  # nothing ever compiles: 1 + 3 tries, then the last invalid reply
    bounded = one(temperature=0.7, resample_invalid=3)
    assert not bounded.valid and bounded.meta["attempts"] == 4 and len(bounded.meta["rejected"]) == 3
    assert engineer_for(server, prompt_style=style).resample_invalid == 8  # the default for programs
    assert engineer_for(server).resample_invalid == 0  # hook code: one sample, as Harness-R1
    with pytest.raises(ConfigError, match="resample_invalid"):
        engineer_for(server, resample_invalid=-1)


def test_improve_prompts_a_model_engineer_as_its_engineer_flags_say(
    served: tuple[ChatServer, Scripted], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clumsy import ClumsySolver
    from typer.testing import CliRunner

    from reharness.cli.main import app
    from reharness.runtime.agents import SCRIPTED_AGENTS

    server, script = served
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    script.requests.clear()
    result = CliRunner().invoke(app, [
        "improve", "--env", "household", "--agent", "clumsy", "--engineer", f"llm:openai:x@{server.base_url}",
        "--engineer-language", "program", "--engineer-max-tokens", "77", "--batch-size", "6", "--k", "2",
        "--eval-n", "6", "--max-steps", "12", "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    asked = script.requests  # only the engineer talks to this server
    assert len(asked) == 2 * 9 and all(r.sampling.max_tokens == 77 for r in asked)
    assert all("<program>" in r.messages[0].content for r in asked)  # the compact program prompt
    assert json.loads(result.stdout)["accepted"] is False  # the scripted replies hold no program
    saved = json.loads((tmp_path / "result.json").read_text())["config"]["engineer_options"]
    assert saved == {"prompt": None, "language": "program", "constrain": None, "max_tokens": 77}
