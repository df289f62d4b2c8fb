"""Running the `reharness` command in a subprocess with extra import paths (an installed kit, a test env)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLE_KIT = Path(__file__).resolve().parents[2] / "examples" / "kits" / "reharness-lights"


def install_example_kit(target: Path) -> Path:
    """``pip install`` the example kit distribution into ``target`` (no dependencies: reharness is here)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
         str(target), str(EXAMPLE_KIT)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return target


def cli(cwd: Path, paths: list[Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")]).strip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "reharness", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def cli_json(cwd: Path, paths: list[Path], *args: str) -> Any:
    proc = cli(cwd, paths, *args, "--json")
    assert proc.returncode == 0, f"{args}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout)
