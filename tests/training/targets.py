"""Test helper: the real small targets of the engineer tests (from ``tests/clumsy.py``).

:class:`ClumsySolver` is the household expert with seeded near-miss commands; with a 12-step limit it fails
systematically, and ``SNAP`` (snap near-misses to the closest admissible command) measurably rescues it.
"""

from __future__ import annotations

from clumsy import SNAP, ClumsySolver

__all__ = ["SNAP", "ClumsySolver"]
