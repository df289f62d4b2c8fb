"""Progress display of long commands: a rich progress bar per batch and a line per stage, on stderr.

Every bar shows the time elapsed and an estimate of the time left (:func:`time_columns`), from the rate of
the recent updates; the commands that run episodes or train all draw their bars through these helpers or
add the same columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from reharness.cli.common import stderr
from reharness.engineer.improve import Events


def time_columns() -> tuple[ProgressColumn, ...]:
    """Elapsed time, then ``eta`` and the estimated time left (``-:--:--`` until a rate is known)."""
    return (TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())


def batch_progress(transient: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *time_columns(),
        console=stderr,
        transient=transient,
    )


class RichEvents(Events):
    """:class:`~reharness.engineer.improve.Events` drawn on a rich :class:`Progress`."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.bars: dict[str, TaskID] = {}

    def stage(self, text: str) -> None:
        self.progress.console.print(f"[dim]·[/dim] {text}", highlight=False)

    def batch(self, label: str, total: int) -> Callable[[Any], None]:
        bar = self.progress.add_task(label, total=total)
        self.bars[label] = bar
        return lambda record: self.progress.advance(bar)

    def batch_done(self, label: str) -> None:
        bar = self.bars.pop(label, None)
        if bar is not None:
            task = next(t for t in self.progress.tasks if t.id == bar)
            self.progress.update(bar, completed=task.total)


def progress_display() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *time_columns(),
        TextColumn("{task.fields[note]}"),
        console=stderr,
    )


def step_reporter(progress: Progress) -> Any:
    bars: dict[str, TaskID] = {}

    def report(stage: str, step: int, total: int, metrics: dict[str, float]) -> None:
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total, note="")
        shown = ("loss", "reward", "eval_loss", "all_fail_share")
        note = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items() if k in shown)
        if note:
            progress.update(bars[stage], completed=step, note=note)
        else:
            progress.update(bars[stage], completed=step)

    return report
