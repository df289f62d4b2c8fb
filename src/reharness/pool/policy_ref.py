"""Naming the policy a pool or profile was measured on: its spec plus, where it has weights, their hash.

A profile is only meaningful for the policy it was measured with (a sibling's value changes as the policy
learns), so profiles and pools record a hash of the weights: the SHA-256 of every ``*.safetensors`` file of an
in-process model directory (``hf:``/``tiny:``), ``None`` for scripted agents and served models (whose weights
reharness cannot see; their spec names them).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from reharness.pool.pool import PolicyRef


def weights_hash(model_dir: str | Path) -> str | None:
    files = sorted(Path(model_dir).glob("*.safetensors"))
    if not files:
        return None
    digest = hashlib.sha256()
    for file in files:
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def policy_ref(spec: str, agent: Any = None) -> PolicyRef:
    """The :class:`PolicyRef` of an agent built from ``spec``."""
    path = getattr(agent, "path", None)
    return PolicyRef(spec=spec, hash=weights_hash(path) if path is not None else None)
