"""Test helper: the real small targets of the engineer tests (from ``tests/engineer/test_paired.py``).

:class:`ClumsySolver` is the household expert with seeded near-miss commands; with a 12-step limit it fails
systematically, and ``SNAP`` (snap near-misses to the closest admissible command) measurably rescues it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engineer"))

from test_paired import SNAP, ClumsySolver  # noqa: E402

__all__ = ["SNAP", "ClumsySolver"]
