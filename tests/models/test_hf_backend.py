"""The in-process Hugging Face backend on a real tiny model: fidelity, seeds, micro-batching, tiny: specs."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_model import build_tiny_model

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.types import ChatRequest, Message, SamplingParams, ToolCall
from reharness.models.base import ARGUMENTS_ERROR, RAW_ARGUMENTS, parse_text_tool_calls, template_messages
from reharness.models.hf_backend import HFBackend
from reharness.models.registry import make_backend
from reharness.models.tiny.registry import train_command
from reharness.runtime import Harness, RunSpec, base_harness_config, run_batch
from reharness.runtime.agent_specs import make_agent

WORDS = ["cabinet", "drawer", "fridge", "mug", "apple", "look", "take", "open", "go", "to", "put", "on"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def backend(model_dir: Path) -> HFBackend:
    return HFBackend(model_dir)


def request(i: int, temperature: float = 0.0, max_tokens: int = 8, top_p: float = 1.0) -> ChatRequest:
    words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(3 + i % 9))  # prompts of varied length
    return ChatRequest(
        messages=(Message(role="user", content=f"Task {i}: {words}."),),
        sampling=SamplingParams(temperature=temperature, max_tokens=max_tokens, top_p=top_p),
        seed=1000 + i,
    )


def test_greedy_matches_transformers_generate(backend: HFBackend) -> None:
    import torch

    req = request(3, max_tokens=10)
    reply = backend.generate_batch([req])[0]
    prompt = backend.encode(req)
    expected = backend.model.generate(torch.tensor([prompt]), max_new_tokens=10, do_sample=False)
    assert list(reply.completion_token_ids or ()) == expected[0, len(prompt) :].tolist()
    assert reply.prompt_token_ids == tuple(prompt)
    assert reply.logprobs is not None and len(reply.logprobs) == 10 and all(lp <= 0 for lp in reply.logprobs)


def test_seeded_sampling_reproduces_and_depends_on_the_seed(backend: HFBackend) -> None:
    reqs = [request(i, temperature=1.0, max_tokens=12, top_p=0.9) for i in range(4)]
    first = backend.generate_batch(reqs)
    again = backend.generate_batch(reqs)
    assert [r.completion_token_ids for r in first] == [r.completion_token_ids for r in again]
    other = backend.generate_batch([r.model_copy(update={"seed": r.seed + 1}) for r in reqs])
    assert [r.completion_token_ids for r in other] != [r.completion_token_ids for r in first]


async def decoding_started(backend: HFBackend, timeout: float = 30.0) -> None:
    """Wait until the backend has formed the next pass (its rows are read and decoding begins), so that a
    request sent now joins a running batch however loaded the machine is (a fixed sleep did not)."""
    batches = backend.stats.batches
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while backend.stats.batches == batches:
        assert loop.time() < deadline, "the backend formed no pass"
        await asyncio.sleep(0.005)


def test_micro_batching_merges_concurrent_requests_and_measures_drift(backend: HFBackend) -> None:
    """Same requests alone vs micro-batched: how often does batching (padding) change a reply?"""
    reqs = [request(i, temperature=0.0 if i % 2 else 0.8, max_tokens=8) for i in range(24)]
    alone = [backend.generate_batch([r])[0] for r in reqs]
    before = len(backend.stats.sizes)

    async def concurrently() -> list:
        return await asyncio.gather(*(backend.complete(r) for r in reqs))

    batched = asyncio.run(concurrently())
    sizes = backend.stats.sizes[before:]
    assert sum(sizes) == 24 and max(sizes) >= 12  # merged into few passes
    differing = sum(
        a.completion_token_ids != b.completion_token_ids for a, b in zip(alone, batched, strict=True)
    )
    print(f"\nbatch sizes {sizes}; replies differing between batch size 1 and batched: {differing}/24")
    assert differing / 24 <= 0.25
    rerun = asyncio.run(concurrently())
    assert [r.completion_token_ids for r in rerun] == [r.completion_token_ids for r in batched]


async def test_requests_join_a_running_batch_and_short_replies_return_first(model_dir: Path) -> None:
    """A long reply decodes while short requests come and go: each short one is answered while the long
    one still runs (it does not wait for the batch's longest reply), the later ones join the running
    batch, and every reply is the one it gets decoded alone."""
    backend = HFBackend(model_dir, running_batches=True, loop_span=0)
    long = request(0, max_tokens=120)
    shorts = [request(i, temperature=0.0 if i % 2 else 0.9, max_tokens=4) for i in range(1, 7)]
    alone = [backend.generate_batch([r])[0] for r in [long, *shorts]]
    backend.reader.prefix.clear()
    joins = backend.stats.joins
    running = asyncio.create_task(backend.complete(long))
    await decoding_started(backend)
    together = []
    for r in shorts:
        together.append(await backend.complete(r))
        assert not running.done()  # answered while the long reply is still being decoded
    together.insert(0, await running)
    assert backend.stats.joins - joins >= len(shorts) - 1
    assert [r.completion_token_ids for r in together] == [r.completion_token_ids for r in alone]
    for got, expected in zip(together, alone, strict=True):
        assert got.logprobs == pytest.approx(expected.logprobs, abs=1e-4)
    await backend.close()
    assert (await backend.complete(shorts[0])).completion_token_ids == alone[1].completion_token_ids


async def test_a_failing_pass_answers_every_request_in_it_joining_ones_too(model_dir: Path) -> None:
    """A tokenizer with a token the model has no embedding for (a real misconfiguration) makes the pass that
    reads it fail: the request decoding and the one joining it both get the error, nobody is left waiting,
    and the backend serves the next request."""
    backend = HFBackend(model_dir, running_batches=True, loop_span=0)
    backend.tokenizer.add_tokens(["zzpoisonzz"])
    assert backend.tokenizer.convert_tokens_to_ids("zzpoisonzz") >= backend.model.config.vocab_size
    long = request(0, max_tokens=120)
    poison = request(1).model_copy(update={"messages": (Message(role="user", content="zzpoisonzz"),)})
    running = asyncio.create_task(backend.complete(long))
    await decoding_started(backend)
    failed = await asyncio.wait_for(backend.complete(poison), 30)
    first = await asyncio.wait_for(running, 30)
    assert failed.error is not None and "IndexError" in failed.error
    assert first.error == failed.error  # the running request was in the failing pass
    assert backend.stats.joins >= 1
    assert (await backend.complete(request(2, max_tokens=4))).error is None
    alone = backend.generate_batch([request(3, max_tokens=4), poison])
    assert [r.error is not None for r in alone] == [True, True]  # one pass: both rows fail together


def test_in_loop_recognises_a_repeating_tail_only() -> None:
    from reharness.models.hf_decode import in_loop

    phrase = [5, 6, 7, 8]
    assert in_loop([1, 2, 3] + phrase * 17, span=64) is False  # 71 tokens: checked every 8 only
    assert in_loop([1] * 5 + phrase * 18 + [9, 9, 9], span=64) is False  # the loop ended
    assert in_loop([1, 2, 3, 4] + phrase * 17, span=64)  # 72 tokens: 68 of them 4-periodic
    assert in_loop([7] * 72, span=64) and not in_loop([7] * 72, span=0)
    sentence = list(range(100, 132))  # a 32-token span three times
    assert in_loop([1] * 8 + sentence * 3, span=64)
    assert not in_loop([1] * 8 + sentence * 2 + list(range(200, 232)), span=64)
    assert not in_loop(list(range(40)) * 2, span=64)  # period 40 is past LOOP_PERIOD


def test_a_reply_in_a_loop_is_cut_where_it_is_recognised(model_dir: Path) -> None:
    from reharness.models.hf_decode import in_loop

    free, cutting = HFBackend(model_dir, loop_span=0), HFBackend(model_dir, loop_span=16)
    reqs = [request(i, max_tokens=160) for i in range(12)]
    full = [r.completion_token_ids or () for r in free.generate_batch(reqs)]
    cut = [r.completion_token_ids or () for r in cutting.generate_batch(reqs)]
    looping = [i for i, ids in enumerate(full) if any(in_loop(list(ids[:n]), 16) for n in range(len(ids)))]
    assert looping, "the tiny model should fall into a loop on some of these prompts"
    for i, (whole, short) in enumerate(zip(full, cut, strict=True)):
        ends = next((n for n in range(len(whole) + 1) if in_loop(list(whole[:n]), 16)), len(whole))
        assert short == whole[:ends], i  # the same reply, cut at the first point it is seen in a loop
    assert sum(map(len, cut)) < sum(map(len, full))


@pytest.mark.parametrize("in_place", [True, False])
def test_prefix_reuse_and_early_exit_match_plain_decoding(model_dir: Path, in_place: bool) -> None:
    """Multi-turn prompts read through the prefix cache, rows of different lengths: same tokens as plain,
    whether a read writes into the decode cache (in place) or is reassembled into a compact one."""
    reusing, plain = HFBackend(model_dir), HFBackend(model_dir, prefix_cache_mb=0)
    reusing.reader.in_place = in_place
    plain.reader.reuse = False  # the one-padded-pass path for models without standard caches
    reqs = [request(i, max_tokens=3 + 2 * (i % 4)) for i in range(8)]
    for _turn in range(3):
        got, expected = reusing.generate_batch(reqs), plain.generate_batch(reqs)
        assert [g.completion_token_ids for g in got] == [e.completion_token_ids for e in expected]
        for g, e in zip(got, expected, strict=True):
            assert g.logprobs == pytest.approx(e.logprobs, abs=1e-4)
        assert [len(g.completion_token_ids or ()) for g in got] == [r.sampling.max_tokens for r in reqs]
        reqs = [
            r.model_copy(
                update={
                    "messages": r.messages
                    + (
                        Message(role="assistant", content=g.text),
                        Message(role="user", content="Nothing happens."),
                    )
                }
            )
            for r, g in zip(reqs, got, strict=True)
        ]
    assert reusing.reader.reused_tokens > reusing.reader.read_tokens  # later turns read only what is new
    assert (reusing.reader.reads_in_place >= 2) if in_place else (reusing.reader.reads_in_place == 0)


def test_prefix_cache_lookup_replacement_and_byte_bound() -> None:
    import torch

    from reharness.models.hf_cache import PrefixCache

    def kv(n: int) -> list:
        return [(torch.arange(float(n)).reshape(1, n, 1), torch.zeros(1, n, 1))]  # 8 bytes per token

    cache = PrefixCache(max_bytes=8 * 10)
    assert cache.lookup([1, 2, 3]) == ([], 0, None)
    cache.store([1, 2, 3], kv(3), prompt_len=2)  # prompt [1, 2], reply [3]
    assert cache.lookup([1, 5])[1:] == (1, None)  # shares only part of the prompt: another conversation
    cache.store([1, 9], kv(2), prompt_len=1)
    got, n, key = cache.lookup([1, 2, 3, 4, 5])
    assert n == 3 and key is not None and got[0][0].flatten().tolist() == [0.0, 1.0, 2.0]
    assert cache.lookup([1, 2, 7, 7])[1:] == (2, key)  # the reply re-tokenised: still its next step
    assert cache.lookup([1, 2])[1] == 1  # at least one token is left to read
    cache.store([1, 2, 3, 4, 5], kv(5), prompt_len=4, replaces=key)  # the continued entry is retired
    assert [e[0].tolist() for e in cache.entries.values()] == [[1, 9], [1, 2, 3, 4, 5]] and cache.bytes == 56
    cache.store([4, 4, 4, 4], kv(4), prompt_len=3)  # over the byte bound: the least recently used goes
    assert [e[0].tolist() for e in cache.entries.values()] == [[1, 2, 3, 4, 5], [4, 4, 4, 4]]


def test_preallocated_cache_layer_grows_when_out_of_room() -> None:
    import torch

    from reharness.models.hf_cache import preallocated_layer

    keys = torch.arange(6.0).reshape(1, 1, 3, 2)
    layer = preallocated_layer(keys, keys.clone(), length=2)
    assert layer.get_seq_length() == 2
    k, _ = layer.update(torch.full((1, 1, 2, 2), 9.0), torch.full((1, 1, 2, 2), 9.0))
    assert k.shape == (1, 1, 4, 2) and k[0, 0, :2].tolist() == [[0.0, 1.0], [2.0, 3.0]] and k[0, 0, 3, 0] == 9


def test_generation_stops_at_the_end_of_turn_token(model_dir: Path) -> None:
    backend = HFBackend(model_dir)
    free = backend.generate_batch([request(5, max_tokens=10)])[0].completion_token_ids or ()
    stop = free[3]
    backend.stop_ids = {*backend.stop_ids, stop}
    reply = backend.generate_batch([request(5, max_tokens=10)])[0]
    ids = reply.completion_token_ids or ()
    assert ids == free[: free.index(stop) + 1] and len(reply.logprobs or ()) == len(ids)
    assert reply.text == backend.tokenizer.decode(list(ids[:-1]), skip_special_tokens=True)


def test_errors_are_responses_not_exceptions(model_dir: Path) -> None:
    backend = HFBackend(model_dir)
    backend.context_length = 24
    long, short = (
        request(8),
        request(0).model_copy(update={"messages": (Message(role="user", content="hi"),)}),
    )
    assert len(backend.encode(long)) > 24 > len(backend.encode(short))
    replies = backend.generate_batch([long, short])
    error = replies[0].error or ""
    assert f"prompt has {len(backend.encode(long))} tokens; the model's context is 24" in error
    assert (
        "history_window" in error and "--engineer-prompt compact" in error
    )  # how an agent, an engineer fixes it
    assert replies[1].error is None and replies[1].completion_token_ids  # the other row is unaffected


def test_tool_call_text_convention() -> None:
    text = 'Think: get it.\n<tool_call>{"name": "act", "arguments": {"action": "look"}}</tool_call>'
    (call,) = parse_text_tool_calls(text)
    assert call == ToolCall(name="act", arguments={"action": "look"}, id="call_0")
    broken = parse_text_tool_calls(
        '<tool_call>{"name": "act", "arguments": {"action": </tool_call><tool_call>[1]'
    )
    assert broken[0].name == "act" and "not valid JSON" in broken[0].arguments[ARGUMENTS_ERROR]
    assert broken[1].name == "invalid_tool_call" and broken[1].arguments[RAW_ARGUMENTS] == "[1]"
    assert parse_text_tool_calls("Action: look") == ()
    history = (
        Message(role="assistant", content="ok", tool_calls=(ToolCall(name="act", arguments={"a": 1}),)),
        Message(role="assistant", content=text, tool_calls=(call,)),  # raw model text is kept as is
    )
    rendered = template_messages(history)
    assert rendered[0]["content"] == 'ok\n<tool_call>{"name": "act", "arguments": {"a": 1}}</tool_call>'
    assert rendered[1]["content"] == text
    assert (
        template_messages(history, structured_tool_calls=True)[0]["tool_calls"][0]["function"]["name"]
        == "act"
    )


async def test_tools_in_the_request_turn_on_tool_call_parsing(backend: HFBackend) -> None:
    tools = ({"type": "function", "function": {"name": "act", "parameters": {"type": "object"}}},)
    reply = await backend.complete(request(1).model_copy(update={"tools": tools}))
    assert reply.error is None and reply.tool_calls == parse_text_tool_calls(reply.text)


def small_harness(env: str) -> Harness:
    config = base_harness_config(env)
    return Harness(config.model_copy(update={"step_limit": 3, "sampling": SamplingParams(max_tokens=6)}))


def test_run_batch_with_hf_spec_is_reproducible(model_dir: Path, tmp_path: Path) -> None:
    spec = f"hf:{model_dir}"
    agent = make_agent(spec)
    run = RunSpec(env="household", agent=spec, split="test", n=6, seed=0, concurrency=6)
    first = asyncio.run(run_batch(run, agent, small_harness("household"), out_dir=tmp_path / "a"))
    second = asyncio.run(run_batch(run, agent, small_harness("household"), out_dir=tmp_path / "b"))
    assert len(first.episodes) == 6 and first.digest == second.digest
    outputs = [s.output for e in first.episodes for s in e.steps if s.output]
    assert outputs and all(
        o.completion_token_ids and len(o.logprobs or ()) == len(o.completion_token_ids) for o in outputs
    )
    assert isinstance(agent, HFBackend) and agent.stats.max_batch >= 2


def test_tiny_specs_resolve_through_the_cache(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path))
    with pytest.raises(ConfigError, match="reharness agent train --env counter --size Z"):
        make_backend("tiny:counter-Z")
    shutil.copytree(model_dir, tmp_path / "tiny" / "counter-Z")
    agent = make_agent("tiny:counter-Z")
    assert isinstance(agent, HFBackend) and agent.policy_id == "tiny:counter-Z"
    assert train_command("db-M") == "reharness agent train --env db --size M --seed 0"
    with pytest.raises(ConfigError, match="ENV-SIZE"):
        make_backend("tiny:nonsense")


def test_spec_errors_say_how_to_fix() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'hf'"):
        make_agent("hff:/x")
    with pytest.raises(ConfigError, match="does not exist"):
        make_agent("hf:/no/such/model")
    with pytest.raises(ConfigError, match="hf:PATH"):
        make_agent("hf:")
    with pytest.raises(UnknownNameError, match="openai:MODEL@BASE_URL"):
        make_agent("gpt-4o")


def test_importing_models_stays_light() -> None:
    code = (
        "import sys, reharness, reharness.models, reharness.models.registry, reharness.models.base\n"
        "from reharness.runtime.agent_specs import make_agent\n"
        "heavy = {'torch', 'transformers', 'httpx', 'trl'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
