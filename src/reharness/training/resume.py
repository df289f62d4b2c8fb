"""Resume a transformers/TRL trainer from its last checkpoint without training past ``max_steps``.

transformers' training loop checks ``max_steps`` only after a step: resumed from a checkpoint that already
holds every step (a run stopped after its last checkpoint, before it saved its model), it trains one step
more. :func:`resume_training` loads such a checkpoint's weights and trainer state instead of calling
``train()``. It uses ``Trainer._load_from_checkpoint``, the method ``train()`` itself calls to load a
checkpoint's weights (full or adapter), because no public method loads them into an existing trainer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TRAINER_STATE = "trainer_state.json"


def resume_training(trainer: Any, checkpoint: str | Path | None) -> None:
    """``trainer.train(resume_from_checkpoint=checkpoint)``, except that a checkpoint holding all
    ``trainer.args.max_steps`` steps is loaded (weights and state) and nothing is trained."""
    state_file = None if checkpoint is None else Path(checkpoint) / TRAINER_STATE
    if state_file is not None and state_file.is_file():
        from transformers import TrainerState

        state = TrainerState.load_from_json(str(state_file))
        if 0 < trainer.args.max_steps <= state.global_step:
            trainer._load_from_checkpoint(str(checkpoint))
            trainer.state = state
            return
    trainer.train(resume_from_checkpoint=None if checkpoint is None else str(checkpoint))
