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


def test_sft_trains_a_tiny_engineer_usable_as_hf_engineer(micro_engineer: Path, micro_data: Path) -> None:
    info = json.loads((micro_engineer / ENGINEER_FILE).read_text())
    assert info["stage"] == "sft" and info["envs"] == ["household"]
    assert info["examples"]["train"] == len(sft_rows(read_records(micro_data), "train"))
    assert info["examples"]["valid"] >= 0 and info["params"] < 100_000
    curve = info["loss_curve"]
    assert len(curve) == 8 and curve[-1] < curve[0]  # it learns
    assert info["prompt_style"]["kind"] == "compact"
    engineer = make_engineer(f"hf:{micro_engineer}", max_tokens=24)
    assert isinstance(engineer, LLMEngineer) and engineer.prompt_style.kind == "compact"
    packet = _packet(micro_data)
    request = engineer.requests(packet, 1)[0]
    assert request.messages == build_prompt(packet, engineer.prompt_style)
    proposals = asyncio.run(engineer.propose(packet, 2, seed=1))
    asyncio.run(engineer.close())
    assert len(proposals) == 2 and all(p.raw_reply and not p.valid for p in proposals)  # 24 tokens: no patch
    assert {p.error_code for p in proposals} <= {
        "no_patch_tag",
        "unterminated_patch_tag",
        "unterminated_think",
    }


def test_sft_errors_name_the_fix(tmp_path: Path, micro_data: Path) -> None:
    with pytest.raises(DataError, match="no collected batches"):
        run_sft(SFTStageConfig(data=str(tmp_path), out=str(tmp_path / "o"), size="micro", steps=1))
    with pytest.raises(ConfigError, match="not a model directory"):
        run_sft(SFTStageConfig(data=str(micro_data), out=str(tmp_path / "o"), base=str(tmp_path), steps=1))
    with pytest.raises(ConfigError, match="--steps"):
        SFTStageConfig.build(data="d", out="o", steps=0)
