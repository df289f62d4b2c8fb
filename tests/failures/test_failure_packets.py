"""Failure packets from real batches: determinism, budget, selection strategies, trimming and masking."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from failure_helpers import answer, harness, replies

from reharness.core.errors import ConfigError, DataError
from reharness.failures import FailurePacket, detect, extract_packet, render_packet, signals
from reharness.failures.text import TRIM_MARKER, Masker, trim
from reharness.kits.shop.failures import PRODUCT_ID
from reharness.runtime import Agent, RandomAgent, RunSpec, run_batch
from reharness.store.records import EpisodeRecord, RunMeta
from reharness.store.run_store import open_run_dir

Batch = tuple[list[EpisodeRecord], RunMeta]


def batch(root: Path, env: str, agent: Agent, n: int, step_limit: int) -> Batch:
    spec = RunSpec(env=env, agent="scripted", n=n, seed=3)
    result = asyncio.run(run_batch(spec, agent, harness(env, step_limit=step_limit), root))
    store = open_run_dir(result.out)
    return store.episodes(), store.read_meta()


@pytest.fixture(scope="module")
def household(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    return batch(tmp_path_factory.mktemp("hh"), "household", RandomAgent(), n=8, step_limit=10)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    return batch(tmp_path_factory.mktemp("shop"), "shop", RandomAgent(), n=4, step_limit=8)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    agent = replies(then=answer('["zzqx-answer", 17]'))
    return batch(tmp_path_factory.mktemp("db"), "db", agent, n=3, step_limit=3)


def test_same_batch_gives_byte_identical_packets(household: Batch, shop: Batch) -> None:
    for records, meta in (household, shop):
        first = extract_packet(records, run_meta=meta)
        again = extract_packet(list(reversed(records)), run_meta=meta)
        assert first.to_json() == again.to_json()
        assert render_packet(first) == render_packet(again)
        assert FailurePacket.model_validate_json(first.to_json()).to_json() == first.to_json()


def test_header_row_and_traces_follow_the_batch(household: Batch) -> None:
    records, meta = household
    packet = extract_packet(records, run_meta=meta, max_traces=5)
    failed = [r for r in records if not r.success]
    h, row = packet.header, packet.row
    assert (h.benchmark, h.source_run, h.strategy) == ("household", meta.run_id, "round_robin")
    assert h.failures_found == len(failed) and h.failures_included == len(packet.traces) == 5
    assert row.batch_size == len(records) and row.target_policy == "random"
    assert row.baseline_pass_rate == sum(r.success for r in records) / len(records)
    assert [t.episode_index for t in row.task_rewards] == sorted(r.episode_index for r in records)
    by_index = {r.episode_index: r for r in records}
    text = render_packet(packet)
    for trace in packet.traces:
        record = by_index[trace.episode_index]
        assert trace.failure_codes == [c.value for c in detect(record)]
        assert trace.signals == signals(record) and len(trace.transcript) == trace.turns == record.num_steps
        assert trace.task_id not in text and trace.task_identity not in text  # ids stay in the JSON
    assert all(instruction in text for instruction in h.instructions)
    assert f"Failures: {len(failed)} found, 5 shown" in text


def test_token_budget_drops_whole_traces_from_the_end(household: Batch) -> None:
    records, meta = household
    full = extract_packet(records, run_meta=meta)
    limited = extract_packet(records, run_meta=meta, token_budget=full.header.approx_tokens // 2)
    text = render_packet(limited)
    assert limited.header.approx_tokens == math.ceil(len(text) / 4) <= full.header.approx_tokens // 2
    assert 1 <= limited.header.failures_included < full.header.failures_included
    kept = len(limited.traces)
    assert [t.episode_index for t in limited.traces] == [t.episode_index for t in full.traces[:kept]]
    assert [t.transcript for t in limited.traces] == [t.transcript for t in full.traces[:kept]]
    tiny = extract_packet(records, run_meta=meta, token_budget=10)
    assert len(tiny.traces) == 1 and tiny.header.approx_tokens > 10  # never zero traces, never half a trace


def test_round_robin_covers_every_failing_type_first(household: Batch) -> None:
    records, meta = household
    types = {r.task_type for r in records if not r.success}
    assert len(types) >= 2
    packet = extract_packet(records, run_meta=meta)
    first = [t.task_type for t in packet.traces[: len(types)]]
    assert sorted(first) == sorted(types)


def test_lowest_reward_orders_by_score_then_run_and_episode(household: Batch) -> None:
    records, meta = household
    scores = [0.5, 0.0, 0.25, 0.0, 0.75, 0.25, 0.0, 0.5]
    scored = [r.model_copy(update={"score": s}) for r, s in zip(records, scores, strict=True)]
    packet = extract_packet(scored, run_meta=meta, strategy="lowest_reward", max_traces=6)
    got = [(t.reward, t.episode_index) for t in packet.traces]
    assert got == sorted((r.score, r.episode_index) for r in scored)[:6]
    with pytest.raises(ConfigError, match="strategy"):
        extract_packet(records, strategy="random_pick")


def test_long_texts_keep_head_and_tail_with_a_marker(shop: Batch) -> None:
    records, meta = shop
    assert trim("abcdefghij", 4) == "ab" + TRIM_MARKER.format(n=6) + "ij" and trim("abc", 4) == "abc"
    packet = extract_packet(records, run_meta=meta, obs_chars=80, reply_chars=40)
    by_index = {r.episode_index: r for r in records}
    checked = 0
    for trace in packet.traces:
        mask = Masker("shop")
        masked = [mask(s.observation) for s in by_index[trace.episode_index].steps]
        for step, original in zip(trace.transcript, masked, strict=True):
            if len(original) > 80:
                assert step.observation == trim(original, 80)
                assert step.observation.startswith(original[:40])
                assert step.observation.endswith(original[-40:])
                assert f"[{len(original) - 80} chars trimmed]" in step.observation
                checked += 1
            else:
                assert step.observation == original
    assert checked > 0


def test_shop_product_ids_are_masked_but_kept_as_leakage_facts(shop: Batch) -> None:
    records, meta = shop
    packet = extract_packet(records, run_meta=meta)
    text = render_packet(packet)
    traces_json = json.dumps([t.model_dump(mode="json") for t in packet.traces])
    assert PRODUCT_ID.search(text) is None and PRODUCT_ID.search(traces_json) is None
    assert "<product-1>" in text and any(t.masked["product_ids"] for t in packet.traces)
    leaked = packet.leakage.product_ids[0]
    assert any(leaked in r.steps[0].observation for r in records)
    evidence = packet.leakage_evidence()
    assert evidence.find(f"return {{'action': 'click[{leaked}]'}}") is not None
    assert evidence.find(packet.traces[0].task_id) is not None


def test_db_answers_are_masked_and_household_instances_kept(db: Batch, household: Batch) -> None:
    records, meta = db
    packet = extract_packet(records, run_meta=meta)
    text = render_packet(packet)
    assert "zzqx" not in text and 'Final Answer: ["<text>", "<number>"]' in text
    assert all(t.failure_codes == ["premature_answer", "wrong_answer"] for t in packet.traces)
    hh = extract_packet(*household[:1], run_meta=household[1])
    assert "go to " in render_packet(hh) and any(" 1" in o for o in hh.leakage.object_instances)


def test_bad_batches_are_clear_errors(household: Batch, shop: Batch) -> None:
    with pytest.raises(DataError, match="empty"):
        extract_packet([])
    with pytest.raises(DataError, match="one environment"):
        extract_packet(household[0] + shop[0])
    successes = [r.model_copy(update={"success": True, "score": 1.0}) for r in household[0]]
    empty = extract_packet(successes)
    assert empty.traces == [] and "No failures in this batch." in render_packet(empty)
