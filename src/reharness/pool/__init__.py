"""Harness-S's sibling pool (layer ``pool``): repair directions, siblings, the frozen pool directory.

The pool and its siblings:

- :mod:`.directions`: :class:`Direction` and the shipped ``directions.yaml`` (``--directions NAMES|FILE``);
- :mod:`.mutations`: harness-config mutations along a direction (the non-code half of a sibling's repair);
- :mod:`.sibling`: :class:`Sibling` = H0 + direction + harness-config delta + overlay patches, content-hashed,
  loads as an ordinary :class:`~reharness.runtime.harness.Harness`;
- :mod:`.pool`: :class:`Pool`, :func:`load_pool` (frozen: every hash is checked on load);
- :mod:`.policy_ref`: naming the policy a pool or profile was measured on (spec plus weights hash);
- :mod:`.build`: hand-built pools of siblings the user names (``reharness pool build``);
- :mod:`.placebo`: placebo siblings (a neutral sentence): the perturbation floor, and the ``placebo`` arm.

Building one by directional evolution (Harness-S §1):

- :mod:`.evolve`: directional evolution of a sibling pool (``reharness pool evolve``);
- :mod:`.lineage`: evolution's records: a candidate's lineage, its measure on ``valid``, the result;
- :mod:`.measure`: running a pool: H0 and every sibling on the same tasks and seeds, and what that measures;
- :mod:`.complementary`: complementary selection: each admitted sibling must add coverage;
- :mod:`.evolve_report`: evolution's ``report.md`` and ``coverage.png``.

Profiles and routing:

- :mod:`.cell`: one profile cell: paired-outcome counts, a Wilson interval and observed behaviour;
- :mod:`.profile`: behaviour profiles (:class:`Profile`, :func:`measure_profile`, ``POOL/profile.json``);
- :mod:`.router`: :class:`Router`: which sibling(s) to try on a task that failed under H0 (validation,
  profile, vote, random, oracle; Rank-1);
- :mod:`.judges`: the judges of the router's ``vote`` strategy (rule judges and LLM judges);
- :mod:`.strategies`: the router's strategies, one class each behind one protocol, in one registry;
- :mod:`.decision`: what the router sees and decides, and its JSONL decision log;
- :mod:`.stats`: routing statistics from a decision log (``reharness pool show --log``);
- :mod:`.routed_run`: routed runs at inference (``reharness run --pool POOL --route rank1|oracle``);
- :mod:`.evaluate`: ``reharness pool eval``: H0, each sibling, Rank-1 and the oracle on held-out tasks.

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
