"""Progress of TRL trainers as plain callbacks: ``progress(stage, step, total, metrics)``.

The CLI draws them with rich; the trainers' own tqdm bars and printed logs are turned off when a callback is
given. Also records the wall time of every optimizer step (for the GRPO time breakdown).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

ProgressFn = Callable[[str, int, int, dict[str, float]], None]


def progress_callbacks(progress: ProgressFn | None, total: int, stage: str = "train") -> list[Any]:
    """``[callback]`` forwarding step ends and logs to ``progress`` (empty when ``progress`` is None)."""
    if progress is None:
        return []
    report: ProgressFn = progress
    from transformers import TrainerCallback

    class _Progress(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            metrics = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            report(stage, int(state.global_step), total, metrics)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            report(stage, int(state.global_step), total, {})

    return [_Progress()]


def step_timer() -> Any:
    """A callback whose ``seconds`` lists the wall time of each optimizer step (generation and reward
    computation included: TRL generates inside the step)."""
    from transformers import TrainerCallback

    class _Timer(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self._start = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._start = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seconds.append(time.perf_counter() - self._start)

    return _Timer()


def quiet(trainer: Any) -> None:
    """Remove the trainer's own printed logs and tqdm bars (when a progress callback draws them instead)."""
    from transformers import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
