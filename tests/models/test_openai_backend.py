"""The OpenAI-compatible backend against a real local server (127.0.0.1) serving a real tiny model.

Faults are injected by the server (``ChatServer.faults``): 500s, 429 with Retry-After, a hung connection,
malformed JSON, an empty choice list, a dropped connection. Each must end in a retry or a clear
``ChatResponse.error`` — never an exception — and a whole ``run_batch`` must survive them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tiny_model import build_tiny_model

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.types import ChatRequest, ChatResponse, Message, SamplingParams, ToolCall
from reharness.models.base import ARGUMENTS_ERROR, RAW_ARGUMENTS
from reharness.models.hf_backend import HFBackend
from reharness.models.openai_backend import OpenAIBackend, retry_after_seconds
from reharness.models.registry import parse_spec
from reharness.models.server import ChatServer, Fault, ServerThread
from reharness.runtime import FunctionAgent, Harness, RunSpec, base_harness_config, run_batch
from reharness.runtime.agent_specs import make_agent

TOOLS = ({"type": "function", "function": {"name": "act", "parameters": {"type": "object"}}},)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    import torch

    torch.set_num_threads(1)
    backend = HFBackend(build_tiny_model(tmp_path_factory.mktemp("tiny")))
    thread = ServerThread(ChatServer(backend, model_name="tiny"))
    thread.start()
    yield thread.server
    thread.stop()


@pytest.fixture
def server(served: ChatServer) -> ChatServer:
    served.faults.clear()
    served.request_times.clear()
    return served


def request(seed: int = 3, temperature: float = 0.0, max_tokens: int = 8, tools: Any = ()) -> ChatRequest:
    return ChatRequest(
        messages=(
            Message(role="system", content="Act."),
            Message(role="user", content="You see a cabinet 1."),
        ),
        sampling=SamplingParams(temperature=temperature, max_tokens=max_tokens),
        seed=seed,
        tools=tools,
    )


def client(server: ChatServer, **kwargs: Any) -> OpenAIBackend:
    return OpenAIBackend("tiny", server.base_url, **({"backoff_base_s": 0.01, "timeout_s": 5.0} | kwargs))


async def test_real_generation_matches_the_in_process_model(server: ChatServer) -> None:
    backend = client(server)
    reply = await backend.complete(request(seed=5, temperature=1.0))
    await backend.close()
    assert reply.error is None and reply.text
    direct = server.backend.generate_batch([request(seed=5, temperature=1.0)])[0]  # type: ignore[attr-defined]
    assert reply.completion_token_ids == direct.completion_token_ids and len(direct.completion_token_ids) == 8
    assert reply.prompt_token_ids == direct.prompt_token_ids
    assert reply.logprobs is not None and len(reply.logprobs) == 8
    assert reply.logprobs == pytest.approx(direct.logprobs, abs=1e-5)
    assert reply.text == direct.text
    assert reply.prompt_tokens == len(direct.prompt_token_ids or ())  # the server's usage block


def test_a_vllm_reply_is_read_whole() -> None:
    """A chat completion exactly as vLLM sends it (``--enable-auto-tool-choice``, ``logprobs: true``, no
    token ids asked for): tool calls with JSON-string arguments, per-token log-probs, and ``usage``."""
    from reharness.models.openai_backend import parse_completion

    reply = parse_completion(
        {
            "id": "chatcmpl-9d1", "object": "chat.completion", "created": 1733300000, "model": "Qwen3-8B",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant", "content": None, "reasoning_content": None,
                    "tool_calls": [{
                        "id": "chatcmpl-tool-4f1", "type": "function",
                        "function": {"name": "act", "arguments": "{\"action\": \"open cabinet 1\"}"},
                    }],
                },
                "logprobs": {"content": [
                    {"token": "<tool_call>", "logprob": -0.01, "bytes": [60], "top_logprobs": []},
                    {"token": "{\"", "logprob": -0.25, "bytes": [123, 34], "top_logprobs": []},
                ]},
                "finish_reason": "tool_calls", "stop_reason": None,
            }],
            "usage": {"prompt_tokens": 412, "total_tokens": 431, "completion_tokens": 19},
            "prompt_logprobs": None,
        }
    )  # fmt: skip
    assert reply.error is None and reply.text == ""
    assert [(c.name, c.arguments, c.id) for c in reply.tool_calls] == [
        ("act", {"action": "open cabinet 1"}, "chatcmpl-tool-4f1")
    ]
    assert reply.logprobs == (-0.01, -0.25) and reply.completion_token_ids is None
    assert reply.prompt_tokens == 412 and reply.prompt_token_ids is None


async def test_seed_reproduces_and_api_key_is_sent(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TINY_KEY", "sk-test")
    backend = client(server, api_key_env="TINY_KEY")
    a, b, c = [await backend.complete(request(seed=s, temperature=1.0, max_tokens=12)) for s in (1, 1, 2)]
    await backend.close()
    assert a.completion_token_ids == b.completion_token_ids != c.completion_token_ids
    assert server.last_headers["authorization"] == "Bearer sk-test"


async def test_500s_then_success(server: ChatServer) -> None:
    server.faults.extend([Fault("status", 500), Fault("status", 503)])
    backend = client(server)
    reply = await backend.complete(request())
    await backend.close()
    assert reply.error is None and reply.completion_token_ids and backend.retries == 2


async def test_persistent_500_gives_a_clear_error(server: ChatServer) -> None:
    server.faults.extend([Fault("status", 500)] * 3)
    backend = client(server, max_retries=2)
    reply = await backend.complete(request())
    await backend.close()
    assert reply.error is not None and "HTTP 500" in reply.error and "gave up after 2 retries" in reply.error
    assert len(server.request_times) == 3


async def test_429_retry_after_is_honoured(server: ChatServer) -> None:
    server.faults.append(Fault("status", 429, headers={"Retry-After": "1"}))
    backend = client(server)  # its own backoff would wait ~10 ms
    reply = await backend.complete(request())
    await backend.close()
    assert reply.error is None
    first, second = server.request_times
    assert 1.0 <= second - first < 3.0


async def test_retry_after_beyond_the_limit_is_an_error(server: ChatServer) -> None:
    server.faults.append(Fault("status", 429, headers={"Retry-After": "3600"}))
    backend = client(server, max_retry_after_s=60)
    reply = await backend.complete(request())
    await backend.close()
    assert reply.error is not None and "wait 3600s" in reply.error and len(server.request_times) == 1


def test_retry_after_parsing() -> None:
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds(None) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after_seconds("soon") is None


async def test_hung_connection_times_out_then_retries(server: ChatServer) -> None:
    server.faults.extend([Fault("hang"), Fault("hang")])
    backend = client(server, timeout_s=0.3, max_retries=1)
    started = time.monotonic()
    reply = await backend.complete(request())
    assert reply.error is not None and "timeout" in reply.error and "gave up after 1 retries" in reply.error
    assert 0.6 <= time.monotonic() - started < 5
    await backend.close()
    # hang once, then the retry succeeds: a timeout that a loaded machine's answer fits in (0.3 s did not,
    # beside two model jobs on 2 cores)
    server.faults.append(Fault("hang"))
    patient = client(server, timeout_s=2.0, max_retries=1)
    reply = await patient.complete(request())
    await patient.close()
    assert reply.error is None and reply.text and len(server.request_times) == 4


async def test_malformed_json_is_retried_then_reported(server: ChatServer) -> None:
    server.faults.append(Fault("malformed"))
    backend = client(server)
    assert (await backend.complete(request())).error is None and backend.retries == 1
    server.faults.append(Fault("malformed"))
    strict = client(server, max_retries=0)
    reply = await strict.complete(request())
    await backend.close()
    await strict.close()
    assert reply.error is not None and "malformed JSON" in reply.error


async def test_empty_choices_are_retried_and_traced(server: ChatServer) -> None:
    server.faults.extend([Fault("empty_choices"), Fault("empty_choices")])
    backend = client(server)
    reply = await backend.complete(request())
    await backend.close()
    assert reply.error is None and reply.text and backend.retries == 2 and len(server.request_times) == 3
    assert reply.attempts == 3 and len(reply.retry_waits_s) == 2 and all(w > 0 for w in reply.retry_waits_s)
    assert all("no choices" in e for e in reply.retry_errors)
    server.faults.extend([Fault("empty_choices")] * 2)
    strict = client(server, max_retries=1)
    given_up = await strict.complete(request())
    await strict.close()
    assert (
        given_up.error is not None and "no choices" in given_up.error and "gave up after 1" in given_up.error
    )
    assert given_up.attempts == 2


async def test_client_errors_are_not_retried(server: ChatServer) -> None:
    server.faults.append(Fault("status", 401))
    backend = client(server)
    unauthorised = await backend.complete(request())
    await backend.close()
    assert unauthorised.error is not None and "OPENAI_API_KEY" in unauthorised.error
    assert backend.retries == 0 and len(server.request_times) == 1 and unauthorised.attempts == 1


def test_retry_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REHARNESS_OPENAI_MAX_RETRIES", "2")
    monkeypatch.setenv("REHARNESS_OPENAI_BACKOFF_S", "0.05")
    backend = OpenAIBackend("m", "http://127.0.0.1:9")
    assert (backend.max_retries, backend.backoff_base_s) == (2, 0.05)
    assert OpenAIBackend("m", "http://127.0.0.1:9", max_retries=0).max_retries == 0
    monkeypatch.setenv("REHARNESS_OPENAI_MAX_RETRIES", "1.5")
    with pytest.raises(ConfigError, match="REHARNESS_OPENAI_MAX_RETRIES"):
        OpenAIBackend("m", "http://127.0.0.1:9")


async def test_dropped_and_refused_connections(server: ChatServer) -> None:
    server.faults.append(Fault("drop"))
    backend = client(server)
    assert (await backend.complete(request())).error is None and backend.retries == 1
    await backend.close()
    dead = OpenAIBackend("tiny", "http://127.0.0.1:9", max_retries=1, backoff_base_s=0.01)
    reply = await dead.complete(request())
    await dead.close()
    assert reply.error is not None and "connection error" in reply.error


async def test_tool_calls_round_trip_with_malformed_arguments_kept_as_data() -> None:
    seen: list[ChatRequest] = []

    def tool_agent(req: ChatRequest) -> ChatResponse:
        seen.append(req)
        good = ToolCall(name="act", arguments={"action": "look"}, id="c1")
        bad = ToolCall(name="act", arguments={RAW_ARGUMENTS: '{"action": "lo', ARGUMENTS_ERROR: "x"}, id="c2")
        return ChatResponse(text="", tool_calls=(good, bad))

    with ServerThread(ChatServer(FunctionAgent(tool_agent), "fn")) as fn_server:
        backend = client(fn_server)
        history = request(tools=TOOLS).messages + (
            Message(
                role="assistant", tool_calls=(ToolCall(name="act", arguments={"action": "go"}, id="c0"),)
            ),
            Message(role="tool", content="Nothing happens.", tool_call_id="c0"),
        )
        reply = await backend.complete(request(tools=TOOLS).model_copy(update={"messages": history}))
        await backend.close()
    assert reply.error is None and [c.name for c in reply.tool_calls] == ["act", "act"]
    assert reply.tool_calls[0].arguments == {"action": "look"} and reply.tool_calls[0].id == "c1"
    assert reply.tool_calls[1].arguments[RAW_ARGUMENTS] == '{"action": "lo'
    assert "not valid JSON" in reply.tool_calls[1].arguments[ARGUMENTS_ERROR]
    got = seen[0]
    assert got.tools == TOOLS and got.seed == 3
    assert (
        got.messages[2].tool_calls[0].arguments == {"action": "go"} and got.messages[3].tool_call_id == "c0"
    )


def small_harness(env: str) -> Harness:
    config = base_harness_config(env)
    return Harness(config.model_copy(update={"step_limit": 2, "sampling": SamplingParams(max_tokens=8)}))


async def test_run_batch_through_the_runtime_survives_faults(server: ChatServer, tmp_path: Path) -> None:
    spec = f"openai:tiny@{server.base_url}"
    agent = make_agent(spec)
    assert isinstance(agent, OpenAIBackend)
    agent.backoff_base_s, agent.max_retries = 0.01, 2
    server.faults.extend([Fault("status", 500), Fault("empty_choices")])
    run = RunSpec(env="household", agent=spec, split="test", n=4, seed=0, concurrency=4)
    result = await run_batch(run, agent, small_harness("household"), out_dir=tmp_path)
    await agent.close()
    assert len(result.episodes) == 4
    assert [e for e in result.episodes if e.termination == "error"] == []  # both faults were retried
    traced = [s.output for e in result.episodes for s in e.steps if s.output and s.output.attempts > 1]
    assert sum(o.attempts - 1 for o in traced) == 2  # each fault left one retry in the trajectory
    assert sorted(("no choices" in err, "HTTP 500" in err) for o in traced for err in o.retry_errors) == [
        (False, True),
        (True, False),
    ]
    outputs = [s.output for e in result.episodes for s in e.steps if s.output and not s.output.error]
    assert outputs and all(o.completion_token_ids for o in outputs)
    assert all(len(o.completion_token_ids or []) == len(o.logprobs or []) for o in outputs)


def test_openai_spec_parsing() -> None:
    assert parse_spec("openai:gpt-4o@https://api.openai.com/v1").base_url == "https://api.openai.com/v1"
    assert parse_spec("openai:llama3:8b").target == "llama3:8b" and parse_spec("openai:x").base_url is None
    with pytest.raises(ConfigError, match="openai:MODEL@BASE_URL"):
        parse_spec("openai:")
    with pytest.raises(ConfigError, match="http"):
        parse_spec("openai:gpt@localhost:8000")
    with pytest.raises(UnknownNameError, match="did you mean 'openai'"):
        make_agent("opena:gpt-4o")
