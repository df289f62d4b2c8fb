"""An interrupted ``agent train`` resumes from its working directory and ends where an uninterrupted one
does (a real micro training, interrupted from its progress callback as Ctrl-C would)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reharness.models.tiny.config import recipe_for
from reharness.training.tiny.train import train_agent

pytest.importorskip("trl")


def _recipe() -> Any:
    return recipe_for("household", "micro").with_overrides(steps=6, batch_size=1, learning_rate=1e-2)


def _weights(path: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


class _Interrupt:
    """A progress callback that interrupts the training when it reaches ``at`` (and records the phases)."""

    def __init__(self, at: int | None = None) -> None:
        self.at = at
        self.phases: list[tuple[str, int]] = []

    def __call__(self, phase: str, step: int, total: int, metrics: dict[str, float]) -> None:
        self.phases.append((phase, step))
        if phase == "train" and step == self.at:
            raise KeyboardInterrupt


def test_an_interrupted_training_resumes_and_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    whole = train_agent(_recipe(), tmp_path / "whole", seed=0, dtype="float32")
    assert whole.provenance["resumed_at_step"] is None

    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        train_agent(_recipe(), out, seed=0, dtype="float32", progress=_Interrupt(at=4))
    work = tmp_path / "cut.training"
    assert (work / "data" / "stats.json").is_file() and (work / "warmed" / "warmup.json").is_file()
    assert not out.exists()

    again = _Interrupt()
    resumed = train_agent(_recipe(), out, seed=0, dtype="float32", progress=again)
    # the step-4 checkpoint was never written (the interruption came first): the last complete one is 3
    assert resumed.provenance["resumed_at_step"] == 3 and ("resume", 3) in again.phases
    assert not any(phase == "demos" for phase, _ in again.phases)  # demos and tokenizer were kept
    assert {step for phase, step in again.phases if phase == "train"} == {4, 5, 6}  # only the steps left
    assert not work.exists()
    a, b = _weights(tmp_path / "whole"), _weights(out)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((out / "provenance.json").read_text())["data"] == whole.provenance["data"]


def test_a_working_directory_of_another_run_is_discarded(tmp_path: Path) -> None:
    out = tmp_path / "agent"
    with pytest.raises(KeyboardInterrupt):
        train_agent(_recipe(), out, seed=0, dtype="float32", progress=_Interrupt(at=2))
    other = _Interrupt()
    result = train_agent(_recipe(), out, seed=1, dtype="float32", progress=other)
    assert ("discarded", 0) in other.phases and any(phase == "demos" for phase, _ in other.phases)
    assert result.provenance["resumed_at_step"] is None and result.provenance["seed"] == 1
