"""Resume a transformers/TRL trainer from its last checkpoint without training past ``max_steps``.

transformers' training loop checks ``max_steps`` only after a step: resumed from a checkpoint that already
holds every step (a run stopped after its last checkpoint, before it saved its model), it trains one step
more. :func:`resume_training` loads such a checkpoint's weights and trainer state instead of calling
``train()``. It uses ``Trainer._load_from_checkpoint``, the method ``train()`` itself calls to load a
checkpoint's weights (full or adapter), because no public method loads them into an existing trainer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TRAINER_STATE = "trainer_state.json"


def steps_done(checkpoint: str | Path) -> int:
    """The optimizer steps a TRL/transformers checkpoint directory holds (0 without a trainer state)."""
    state = Path(checkpoint) / TRAINER_STATE
    if not state.is_file():
        return 0
    return int(json.loads(state.read_text(encoding="utf-8")).get("global_step", 0))


def resume_training(trainer: Any, checkpoint: str | Path | None) -> None:
    """``trainer.train(resume_from_checkpoint=checkpoint)``, except that a checkpoint holding all
    ``trainer.args.max_steps`` steps is loaded (weights and state) and nothing is trained."""
    if checkpoint is not None and 0 < trainer.args.max_steps <= steps_done(checkpoint):
        from transformers import TrainerState

        trainer._load_from_checkpoint(str(checkpoint))
        trainer.state = TrainerState.load_from_json(str(Path(checkpoint) / TRAINER_STATE))
        return
    trainer.train(resume_from_checkpoint=None if checkpoint is None else str(checkpoint))
