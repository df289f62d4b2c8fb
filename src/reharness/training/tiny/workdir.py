"""The working directory of a tiny agent's training: an interrupted training resumes and loses nothing.

``reharness agent train --out DIR`` works in ``DIR.training/`` beside its output and removes it when the model
is saved. What it holds, in the order training produces it:

- ``run.json``: what is being trained (the recipe, the seed, the ``--init`` model's weights digest). A
  rerun with a different one discards the directory and starts over (and says so);
- ``data/``: the tokenizer, the encoded dataset (``datasets``' own ``save_to_disk``) and its statistics;
- ``warmed/``: the model after the copy warm-up, with the warm-up's report;
- ``checkpoints/checkpoint-N/``: the ``Trainer``'s own checkpoints (weights, optimizer, scheduler, RNG
  states), resumed with ``resume_from_checkpoint`` — TRL and transformers restore the step, the learning-rate
  schedule and the data order, so a resumed training ends with the same weights as one never interrupted.

A rerun reuses the furthest stage it finds. No library keeps such a multi-stage state for us: the Trainer
resumes only its own phase, so the stages before it (demos, tokenizer, warm-up) are kept here.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reharness.training.tiny.warmup import WarmupReport

RUN = "run.json"


class TrainingWorkDir:
    """``DIR.training/`` for the output ``DIR`` (see the module)."""

    def __init__(self, out: Path, fingerprint: dict[str, Any]) -> None:
        self.path = out.with_name(out.name + ".training")
        self.fingerprint = json.loads(json.dumps(fingerprint, sort_keys=True, default=str))
        self.discarded = False

    def open(self) -> TrainingWorkDir:
        """Keep the directory when it trains the same run, else start it afresh."""
        run = self.path / RUN
        if self.path.exists():
            try:
                same = json.loads(run.read_text(encoding="utf-8")) == self.fingerprint
            except (OSError, ValueError):
                same = False
            if same:
                return self
            shutil.rmtree(self.path)
            self.discarded = True
        self.path.mkdir(parents=True)
        run.write_text(json.dumps(self.fingerprint, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return self

    @contextlib.contextmanager
    def _stage(self, target: Path) -> Iterator[Path]:
        """Write a stage into ``target.partial`` and rename it: a stage exists whole or not at all."""
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        yield partial
        partial.rename(target)

    # ------------------------------------------------------------------ data
    @property
    def data(self) -> Path:
        return self.path / "data"

    def save_data(self, tokenizer: Any, dataset: Any, stats: dict[str, Any]) -> None:
        with self._stage(self.data) as partial:
            tokenizer.save_pretrained(partial / "tokenizer")
            dataset.save_to_disk(str(partial / "dataset"))
            (partial / "stats.json").write_text(json.dumps(stats) + "\n", encoding="utf-8")

    def load_data(self) -> tuple[Any, Any, dict[str, Any]] | None:
        if not (self.data / "stats.json").is_file():
            return None
        from datasets import load_from_disk
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(self.data / "tokenizer"))
        stats = json.loads((self.data / "stats.json").read_text(encoding="utf-8"))
        return tokenizer, load_from_disk(str(self.data / "dataset")), stats

    # ------------------------------------------------------------------ copy warm-up
    @property
    def warmed(self) -> Path:
        return self.path / "warmed"

    def save_warmed(self, model: Any, report: WarmupReport | None) -> None:
        with self._stage(self.warmed) as partial:
            model.save_pretrained(partial)
            (partial / "warmup.json").write_text(
                json.dumps(None if report is None else asdict(report)) + "\n", encoding="utf-8"
            )

    def load_warmed(self) -> tuple[Any, dict[str, Any] | None] | None:
        if not (self.warmed / "warmup.json").is_file():
            return None
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(str(self.warmed), dtype=torch.float32)
        return model, json.loads((self.warmed / "warmup.json").read_text(encoding="utf-8"))

    # ------------------------------------------------------------------ the Trainer's checkpoints
    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    def last_checkpoint(self) -> Path | None:
        """The Trainer's latest complete checkpoint, if any (the Trainer writes ``trainer_state.json``
        last, so a checkpoint cut off while being saved is passed over; with ``save_total_limit=2`` the one
        before it is still there)."""
        complete = [
            (int(found.name.rsplit("-", 1)[1]), found)
            for found in self.checkpoints.glob("checkpoint-*")
            if found.name.rsplit("-", 1)[1].isdigit() and (found / "trainer_state.json").is_file()
        ]
        return max(complete)[1] if complete else None

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
