"""The profile drift ``experiment s`` reports (``experiments.s_data.drift``), from profile files on disk: each
anchor named and placed on the training axis, drift only between anchors measured the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reharness.experiments.s_data import drift


def _profile(path: Path, cells: dict[str, tuple[int, int]], **measured: float) -> None:
    """A profile file: sibling ``s1``'s (rescues, H0 failures) per cluster, H0 solving 1 of 4 attempts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "cells": {"s1": {k: {"rescues": r, "h0_failures": f} for k, (r, f) in cells.items()}},
        "h0": {"any": {"attempts": 4, "successes": 1}},
        **measured,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_drift_names_every_anchor_and_compares_only_like_measurements(tmp_path: Path) -> None:
    pool, run = tmp_path / "pool", tmp_path / "run"
    _profile(pool / "profile.json", {"a": (1, 4)})  # an older profile: no temperature recorded
    _profile(run / "profiles" / "step-00000.json", {"a": (2, 4)}, temperature=1.0, samples=2)
    _profile(run / "profiles" / "step-00001.json", {"b": (2, 4)}, temperature=1.0, samples=2)
    _profile(run / "profiles" / "final.json", {"b": (1, 4)}, temperature=1.0, samples=2)
    (run / "train_config.json").write_text(json.dumps({"steps": 3}), encoding="utf-8")

    points = drift(pool, run)
    assert [p["label"] for p in points] == [
        "the pool's profile (temperature unknown, 1 sample a task)",
        "step 0 (temperature 1, 2 samples a task)",
        "step 1 (temperature 1, 2 samples a task)",
        "after training, step 3, Rank-1's profile (temperature 1, 2 samples a task)",
    ]
    assert [p["step"] for p in points] == [0, 0, 1, 3]
    assert [p["rates"]["s1"] for p in points] == [0.25, 0.5, 0.5, 0.25]
    # another measurement: no drift; the same one without a shared cell: nothing to measure; then 0.5 → 0.25
    assert [p.get("same_way") for p in points] == [None, False, True, True]
    assert [p.get("drift") for p in points[1:3]] == [None, None]
    assert points[3]["drift"] == pytest.approx(0.25)
