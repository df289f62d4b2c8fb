"""Shared fixtures of the training tests: one micro collection of packets and one micro SFT engineer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from targets import ClumsySolver

from reharness.training.data import Collector, DataConfig

MICRO_DATA = dict(
    envs=["household"],
    agent="clumsy",
    train_batches=3,
    valid_batches=1,
    batch_size=8,
    teacher_k=3,
    max_steps=12,
)


def collect(out: Path, calls: list[int] | None = None, **overrides: Any) -> list[dict[str, Any]]:
    """Run the micro collection into ``out`` with the clumsy target (``calls`` counts its model calls)."""
    config = DataConfig(**(MICRO_DATA | overrides))
    agents = {"household": ClumsySolver(calls=calls)}
    return asyncio.run(Collector(config, out, agents=agents).run())


@pytest.fixture(scope="session")
def micro_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with 3 train + 1 valid household batches of the clumsy target."""
    out = tmp_path_factory.mktemp("data")
    collect(out)
    return out


@pytest.fixture(scope="session")
def micro_engineer(micro_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A micro tiny engineer after 40 SFT steps on ``micro_data``: enough to write the teacher's repair
    program for the clumsy target's packets (greedy), not enough to write it reliably when sampling."""
    from reharness.training.sft import SFTStageConfig, run_sft

    out = tmp_path_factory.mktemp("sft")
    config = SFTStageConfig(
        data=str(micro_data), out=str(out), size="micro", steps=40, batch_size=2, max_prompt_chars=400,
        max_new_tokens=48,
    )  # fmt: skip
    run_sft(config)
    return out
