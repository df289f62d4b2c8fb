"""Every shell block marked runnable in README.md and docs/*.md runs, as written, and exits 0.

A block opened with ```` ```bash runnable ```` is a promise to the reader that its commands work from the
repository root on a fresh install. Each runs under ``bash -euo pipefail`` in a scratch directory that links
the repository's top-level folders (``data``, ``examples``, ``src``, …), so the paths it names resolve as
from the root while everything it writes (``runs/``, pages) stays out of the checkout. Runnable blocks must
be cheap: seconds, no model training.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```bash runnable\n(.*?)^```", re.S | re.M)


def runnable_blocks() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for i, match in enumerate(BLOCK.finditer(doc.read_text(encoding="utf-8"))):
            found.append((f"{doc.relative_to(ROOT)}#{i}", match.group(1)))
    return found


BLOCKS = runnable_blocks()


def test_the_readme_has_a_runnable_tour() -> None:
    assert any(name.startswith("README.md#") for name, _ in BLOCKS)


@pytest.mark.parametrize(("name", "script"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_runnable_block(name: str, script: str, tmp_path: Path) -> None:
    for entry in ROOT.iterdir():
        if entry.is_dir() and not entry.name.startswith(".") and entry.name not in ("runs", "build", "dist"):
            (tmp_path / entry.name).symlink_to(entry)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["COLUMNS"] = "120"
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"{name} failed:\n{script}\nstdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    )
