"""Our OpenAI-compatible server against the official ``openai`` client: streaming (SSE) and ``n`` choices.

A real local server (127.0.0.1) serves a real tiny Hugging Face model (random weights, real sampling), so a
seeded request is deterministic and two seeds give two different replies; a scripted agent serves tool
calls. Streaming must rebuild the non-streamed reply exactly; ``n`` must give ``n`` seeded choices, and an
``n`` out of range a 400 that names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from tiny_model import build_tiny_model

from reharness.core.types import ChatRequest, ChatResponse, ToolCall
from reharness.models.hf_backend import HFBackend
from reharness.models.server import ChatServer, ServerThread
from reharness.models.server_request import MAX_N
from reharness.runtime import FunctionAgent

MESSAGES: list[Any] = [
    {"role": "system", "content": "Act."},
    {"role": "user", "content": "You see a cabinet 1."},
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[openai.OpenAI]:
    import torch

    torch.set_num_threads(1)
    backend = HFBackend(build_tiny_model(tmp_path_factory.mktemp("tiny")))
    with ServerThread(ChatServer(backend, model_name="tiny")) as server:
        yield openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=60)


def create(client: openai.OpenAI, **kwargs: Any) -> Any:
    args = {"model": "tiny", "messages": MESSAGES, "temperature": 1.0, "max_tokens": 12, "seed": 7} | kwargs
    return client.chat.completions.create(**args)


def test_streamed_chunks_rebuild_the_non_streamed_reply(client: openai.OpenAI) -> None:
    whole = create(client)
    chunks = list(create(client, stream=True))
    assert chunks and all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert whole.choices[0].message.content and text == whole.choices[0].message.content
    assert len(chunks) >= 3  # role, content piece(s), finish: a real stream, not one blob
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason]
    assert finishes == [whole.choices[0].finish_reason]


def test_stream_usage_chunk_comes_last(client: openai.OpenAI) -> None:
    whole = create(client)
    chunks = list(create(client, stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_n_gives_n_seeded_choices(client: openai.OpenAI) -> None:
    one = create(client)
    two = create(client, n=2)
    again = create(client, n=2)
    texts = [c.message.content for c in two.choices]
    assert [c.index for c in two.choices] == [0, 1]
    assert texts == [c.message.content for c in again.choices]  # seeded: the same choices every time
    assert texts[0] == one.choices[0].message.content  # choice 0 is the n=1 reply
    assert texts[0] != texts[1]  # choice 1 has a seed of its own
    assert two.usage.completion_tokens > one.usage.completion_tokens  # usage counts both choices


def test_n_with_stream_interleaves_choices_that_rebuild_each_reply(client: openai.OpenAI) -> None:
    whole = create(client, n=3)
    chunks = list(create(client, n=3, stream=True))
    rebuilt = {i: "" for i in range(3)}
    for chunk in chunks:
        for choice in chunk.choices:
            rebuilt[choice.index] += choice.delta.content or ""
    assert rebuilt == {c.index: c.message.content for c in whole.choices}
    assert {c.choices[0].index for c in chunks[:3]} == {0, 1, 2}  # interleaved, as a batch decodes


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n", 0),
        ("n", MAX_N + 1),
        ("stream_options", {"x": 1}),
        ("stop", ["\n"]),  # not implemented: refused, never silently ignored
        ("logit_bias", {"42": 5}),
        ("presence_penalty", 0.5),
        ("response_format", {"type": "json_object"}),
    ],
)
def test_out_of_range_options_are_a_400_naming_them(client: openai.OpenAI, field: str, value: Any) -> None:
    extra = {"stream": True} if field == "stream_options" else {}
    with pytest.raises(openai.BadRequestError, match=f"'{field}'"):
        create(client, **{field: value}, **extra)


def test_neutral_values_of_unimplemented_fields_are_accepted(client: openai.OpenAI) -> None:
    plain = create(client)
    neutral: dict[str, Any] = {"stop": [], "presence_penalty": 0, "frequency_penalty": 0.0}
    neutral["response_format"] = {"type": "text"}
    same = create(client, **neutral)
    assert same.choices[0].message.content == plain.choices[0].message.content


def test_streamed_tool_calls_match_the_non_streamed_ones() -> None:
    def tool_agent(request: ChatRequest) -> ChatResponse:
        calls = (
            ToolCall(name="execute_sql", arguments={"sql": "SELECT 1"}, id="c1"),
            ToolCall(name="commit_final_answer", arguments={"answers": ["1"]}, id="c2"),
        )
        return ChatResponse(text="", tool_calls=calls)

    with ServerThread(ChatServer(FunctionAgent(tool_agent), "fn")) as server:
        fn_client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
        whole = fn_client.chat.completions.create(model="fn", messages=MESSAGES)
        chunks = list(fn_client.chat.completions.create(model="fn", messages=MESSAGES, stream=True))
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in chunk.choices[0].delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            call["name"] += delta.function.name or "" if delta.function else ""
            call["arguments"] += delta.function.arguments or "" if delta.function else ""
    expected = {
        k: {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
        for k, c in enumerate(whole.choices[0].message.tool_calls or [])
    }
    assert calls == expected and len(expected) == 2
    assert [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason] == ["tool_calls"]
