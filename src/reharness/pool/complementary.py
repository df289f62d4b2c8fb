"""Complementary selection of a pool (Harness-S): each admitted sibling must add coverage.

Greedy set cover on the ``valid`` split: the finalist that rescues the most H0 failures no admitted sibling
rescues is admitted next (ties: fewer broken tasks, then evolution order), as long as it adds at least
``min_new``; a finalist with the same content (delta and patches) as an admitted one is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from reharness.pool.lineage import ValidMeasure


def _gain(m: ValidMeasure, covered: frozenset[str], order: Sequence[ValidMeasure]) -> tuple[int, int, int]:
    return (len(set(m.rescued) - covered), -len(m.broken), -list(order).index(m))


def complementary(measured: Sequence[ValidMeasure], size: int, min_new: int) -> list[ValidMeasure]:
    """Greedy coverage: admit the finalist adding the most new rescues (ties: fewer broken, earlier)."""
    admitted: list[ValidMeasure] = []
    covered: set[str] = set()
    left = list(measured)
    seen_content: set[tuple[str, ...]] = set()
    while left and len(admitted) < size:
        best = max(left, key=lambda m: _gain(m, frozenset(covered), measured))
        left.remove(best)
        if len(set(best.rescued) - covered) < min_new:
            break
        key = (json.dumps(best.lineage.delta, sort_keys=True), *(p.identity for p in best.lineage.patches))
        if key in seen_content:
            continue
        seen_content.add(key)
        admitted.append(best)
        covered |= set(best.rescued)
    return admitted
