"""Harness-S's sibling pool (layer ``pool``): repair directions, siblings, the frozen pool directory.

- :mod:`.directions`: :class:`Direction` and the shipped ``directions.yaml`` (``--directions NAMES|FILE``);
- :mod:`.sibling`: :class:`Sibling` = H0 + direction + harness-config delta + overlay patches, content-hashed,
  loads as an ordinary :class:`~reharness.runtime.harness.Harness`;
- :mod:`.pool`: :class:`Pool`, :func:`load_pool` (frozen: every hash is checked on load);
- :mod:`.profile`: behaviour profiles (:class:`Profile`, :func:`measure_profile`, ``POOL/profile.json``);
- :mod:`.router` / :mod:`.judges` / :mod:`.decision`: the router (:class:`Router`: validation, profile, vote,
  random, oracle; Rank-1), its judges and its JSONL decision log; :mod:`.stats`: routing statistics.

Sits above ``engineer``/``failures``/``patches``/``runtime`` and below ``training``/``cli``; it never imports
``training``.
"""

from __future__ import annotations

from reharness.pool.directions import Direction, builtin_directions, directions_of, load_directions
from reharness.pool.pool import POOL_FORMAT, PolicyRef, Pool, load_pool
from reharness.pool.profile import Profile, ProfileCell, load_profile, measure_profile, reanchor
from reharness.pool.router import Router
from reharness.pool.sibling import Provenance, Sibling, sibling_id

__all__ = [
    "POOL_FORMAT",
    "Direction",
    "PolicyRef",
    "Pool",
    "Profile",
    "ProfileCell",
    "Provenance",
    "Router",
    "Sibling",
    "builtin_directions",
    "directions_of",
    "load_directions",
    "load_pool",
    "load_profile",
    "measure_profile",
    "reanchor",
    "sibling_id",
]
