"""Canonical JSON and stable hashes.

Hashes identify tasks, harnesses, runs and trajectories across processes and machines, so they are taken
over canonical JSON (sorted keys, no whitespace, UTF-8) and never over Python's randomised ``hash``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` deterministically (sorted keys, compact, unicode kept)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def stable_hash(value: Any, length: int = 16) -> str:
    """Hex SHA-256 prefix of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def derive_seed(*parts: Any) -> int:
    """Derive a 63-bit integer seed from any JSON-able parts (e.g. run seed, episode index, step)."""
    digest = hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF
