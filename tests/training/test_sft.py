"""Compact engineer prompts and cold-start SFT of the tiny engineer (real TRL training on the micro set)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reharness.core.errors import ConfigError, DataError
from reharness.engineer.compact import ENGINEER_FILE, PromptStyle, build_prompt, compact_packet
from reharness.engineer.factory import make_engineer
from reharness.engineer.llm import LLMEngineer
from reharness.engineer.program import program_patch, program_text
from reharness.failures.packets import FailurePacket
from reharness.patches.reply import extract_patch
from reharness.training.data import read_records, sft_rows
from reharness.training.sft import SFTStageConfig, examples, run_sft


def _packet(micro_data: Path) -> FailurePacket:
    return FailurePacket.model_validate_json(read_records(micro_data)[0]["packet"])


def test_compact_prompt_fits_its_budget_and_keeps_the_failure_codes(micro_data: Path) -> None:
    packet = _packet(micro_data)
    for budget in (400, 1500, 4000):
        text = compact_packet(packet, budget)
        assert len(text) <= budget and text == compact_packet(packet, budget)
        assert "invalid_action=" in text and text.endswith("</patch>.")
    assert compact_packet(packet, 4000).count("\n") > compact_packet(packet, 1500).count("\n")
    assert "## trace 1" in compact_packet(packet, 1500)
    system, user = build_prompt(packet, PromptStyle(kind="compact", max_chars=900))
    assert "'household'" in system.content and len(user.content) <= 900
    assert build_prompt(packet) == build_prompt(packet, PromptStyle())  # default: the full prompt


def test_sft_examples_are_prompt_completion_pairs(micro_data: Path) -> None:
    rows = sft_rows(read_records(micro_data), "train")
    style = PromptStyle(kind="full")
    first = examples(rows, style)[0]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert first["prompt"][1]["content"] == rows[0]["user"]
    assert first["completion"] == [{"role": "assistant", "content": rows[0]["reply"]}]
    short = examples(rows, PromptStyle(kind="compact"), short=True)
    for row, example in zip(rows, short, strict=True):
        reply = example["completion"][0]["content"]
        assert reply.startswith("<think>\nRepair: [") and len(reply) < len(row["reply"])
        assert extract_patch(reply).identity == extract_patch(row["reply"]).identity  # the same patch


def test_program_examples_are_teacher_programs_measured_on_their_packet(micro_data: Path) -> None:
    """Program targets: up to N distinct programs per packet, each compiling to a patch the teacher
    proposed *for that packet* and measured there (valid, Δ ≥ 0); the best one is the kept example."""
    rows = sft_rows(read_records(micro_data), "train")
    style = PromptStyle(kind="compact", language="program", max_chars=400)
    one, two = examples(rows, style, per_packet=1), examples(rows, style, per_packet=2)
    assert len(one) == len(rows) and len(rows) < len(two) <= 2 * len(rows)
    for row in rows:
        measured = {c["patch_id"]: c for c in row["teacher"]["candidates"] if c["valid"] and c["delta"] >= 0}
        prompt = examples([row], style, per_packet=2)
        replies = [e["completion"][0]["content"] for e in prompt]
        assert all(e["prompt"] == prompt[0]["prompt"] for e in prompt)  # the packet's own prompt
        assert prompt[0]["prompt"][1]["content"].endswith("<program>...</program>.")
        patches = [program_patch(program_text(r) or "", "household") for r in replies]
        assert all(r.startswith("<program>") and len(r) < 200 for r in replies)
        identities = [p.identity for p in patches]
        assert set(identities) <= set(measured) and len(set(identities)) == len(identities)
        assert patches[0].identity == row["patch_id"]  # the best measured program is the kept example


def test_packet_views_show_other_failures_of_the_same_packet(micro_data: Path) -> None:
    """Augmentation: each view is the same packet (header, tasks, measured target) with its traces in a
    rotated order, so a small prompt budget shows other traces; the targets are unchanged."""
    rows = sft_rows(read_records(micro_data), "train")
    style = PromptStyle(kind="compact", language="program", max_chars=900)
    row = next(r for r in rows if len(FailurePacket.model_validate_json(r["packet"]).traces) >= 3)
    plain, viewed = examples([row], style, per_packet=2), examples([row], style, per_packet=2, views=3)
    assert len(viewed) == 3 * len(plain)
    users = [e["prompt"][1]["content"] for e in viewed]
    assert users[0] == plain[0]["prompt"][1]["content"]  # the first view is the packet as recorded
    assert len(set(users)) == 3 and all(len(u) <= 900 for u in users)
    header = users[0].split("## trace")[0]
    assert all(u.startswith(header) and "## trace 1 " in u for u in users)  # same header, renumbered
    targets = {e["completion"][0]["content"] for e in plain}
    assert {e["completion"][0]["content"] for e in viewed} == targets  # no relabelling
    assert examples([row], style, per_packet=2, views=1) == plain


def test_sft_trains_a_tiny_engineer_usable_as_hf_engineer(micro_engineer: Path, micro_data: Path) -> None:
    info = json.loads((micro_engineer / ENGINEER_FILE).read_text())
    assert info["stage"] == "sft" and info["envs"] == ["household"]
    rows = sft_rows(read_records(micro_data), "train")
    assert info["examples"]["packets"] == len(rows) < info["examples"]["train"]  # 2 programs per packet
    config = SFTStageConfig.model_validate(info["config"])
    style = PromptStyle.model_validate(info["prompt_style"])
    valid_rows = sft_rows(read_records(micro_data), "valid")
    recorded = examples(valid_rows, style, config.short_replies, config.targets_per_packet)
    assert info["examples"]["valid"] == len(recorded) > 0  # the valid packets' examples, all of them
    assert info["params"] < 150_000
    curve = info["loss_curve"]
    assert len(curve) == 20 and curve[-1] < curve[0] / 4  # it learns
    assert info["prompt_style"]["kind"] == "compact" and info["prompt_style"]["language"] == "program"
    engineer = make_engineer(f"hf:{micro_engineer}", temperature=0.0)
    assert isinstance(engineer, LLMEngineer) and engineer.prompt_style.language == "program"
    packet = _packet(micro_data)
    request = engineer.requests(packet, 1)[0]
    assert request.messages == build_prompt(packet, engineer.prompt_style)
    proposals = asyncio.run(engineer.propose(packet, 2, seed=1))
    asyncio.run(engineer.close())
    # not degenerate: the micro engineer writes a short program that compiles to a patch the teacher
    # measured with Δ ≥ 0 on a train packet (it fails if the engineer stops writing valid programs)
    measured = {c["patch_id"] for r in rows for c in r["teacher"]["candidates"] if c["valid"]}
    for proposal in proposals:
        assert proposal.valid, (proposal.raw_reply, proposal.error)
        assert proposal.patch is not None and proposal.patch.identity in measured
        assert proposal.patch.metadata["language"] == "repair-program-v1"
        assert proposal.meta["completion_tokens"] < 24  # a few dozen tokens, not ~860


def test_grammar_constrained_sampling_writes_valid_programs(micro_engineer: Path, micro_data: Path) -> None:
    """At temperature 1.0 the micro engineer rarely writes a program that compiles; decoding under the
    program grammar (one sample each, no resampling) does, and reproducibly for fixed seeds."""
    packet = _packet(micro_data)

    def valid(constrain: bool) -> tuple[int, list[str]]:
        engineer = make_engineer(
            f"hf:{micro_engineer}", temperature=1.0, resample_invalid=0, constrain=constrain
        )
        try:
            proposals = asyncio.run(engineer.propose(packet, 8, seed=3))
        finally:
            asyncio.run(engineer.close())
        return sum(p.valid for p in proposals), [p.raw_reply for p in proposals]

    free, _ = valid(False)
    masked, replies = valid(True)
    assert masked >= 7 and masked > free, (masked, free)
    assert all(r.lstrip().startswith("<program>") for r in replies)
    assert valid(True)[1] == replies  # seeded: the same replies again


def test_a_reply_with_no_viable_token_ends_at_once(micro_engineer: Path) -> None:
    """When no token keeps a constrained reply viable, decoding stops (instead of scanning candidates at
    every token up to the reply budget, which stalled a GRPO step for minutes)."""
    from reharness.core.types import ChatRequest, SamplingParams
    from reharness.models.hf_backend import HFBackend

    backend = HFBackend(micro_engineer)
    messages = [{"role": "user", "content": "write a program"}]
    sampling = SamplingParams(temperature=1.0, max_tokens=64)
    free, dead = backend.generate_batch(
        [
            ChatRequest(messages=messages, sampling=sampling, seed=1),
            ChatRequest(messages=messages, sampling=sampling, seed=1, constraint=lambda text, final: False),
        ]
    )
    assert len(free.completion_token_ids) > 1
    assert len(dead.completion_token_ids) == 1 and dead.completion_token_ids[0] in backend.stop_ids


def test_sft_errors_name_the_fix(tmp_path: Path, micro_data: Path) -> None:
    with pytest.raises(DataError, match="no collected batches"):
        run_sft(SFTStageConfig(data=str(tmp_path), out=str(tmp_path / "o"), size="micro", steps=1))
    with pytest.raises(ConfigError, match="not a model directory"):
        run_sft(SFTStageConfig(data=str(micro_data), out=str(tmp_path / "o"), base=str(tmp_path), steps=1))
    with pytest.raises(ConfigError, match="--steps"):
        SFTStageConfig.build(data="d", out="o", steps=0)
