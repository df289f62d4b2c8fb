"""Long commands draw progress bars with the time left: ``run`` and ``improve`` end to end, and the shared
displays that ``pool``, ``agent``, ``train`` and ``experiment`` draw through."""

from __future__ import annotations

import re
from pathlib import Path

from rich.progress import TimeRemainingColumn
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.cli.progress import batch_progress, progress_display

BAR = re.compile(r"(\d+)/(\d+).*\d+:\d\d:\d\d eta \d+:\d\d:\d\d")


def test_run_and_improve_bars_show_an_eta(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", "--env", "household", "--agent", "random", "--n", "4", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0 and BAR.search(result.stderr), result.stderr
    args = [
        "improve",
        "--env",
        "household",
        "--agent",
        "random",
        "--engineer",
        "operators",
        "--batch-size",
        "4",
    ]
    args += ["--k", "1", "--eval-n", "4", "--max-steps", "8", "--out", str(tmp_path / "improve")]
    result = runner.invoke(app, args)
    bars = [line for line in result.stderr.splitlines() if "━" in line]
    assert result.exit_code == 0 and bars and all(BAR.search(line) for line in bars), result.stderr


def test_the_shared_displays_estimate_the_time_left() -> None:
    for display in (batch_progress(transient=True), progress_display()):
        assert any(isinstance(column, TimeRemainingColumn) for column in display.columns)
