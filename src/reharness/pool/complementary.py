"""Complementary selection of a pool (Harness-S): each admitted sibling must add coverage.

Greedy set cover on the ``valid`` split: the finalist that rescues the most H0 failures no admitted sibling
rescues is admitted next (ties: fewer broken tasks, then evolution order), as long as it adds at least
``min_new``; a finalist with the same content (delta and patches) as an admitted one is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from reharness.pool.lineage import ValidMeasure


def complementary(measured: Sequence[ValidMeasure], size: int, min_new: int) -> list[ValidMeasure]:
    """Greedy coverage: admit the finalist adding the most new rescues (ties: fewer broken, earlier)."""
    admitted: list[ValidMeasure] = []
    covered: set[str] = set()
    left = list(enumerate(measured))  # (evolution order, finalist)
    seen_content: set[tuple[str, ...]] = set()
    while left and len(admitted) < size:
        best = max(
            left, key=lambda item: (len(set(item[1].rescued) - covered), -len(item[1].broken), -item[0])
        )
        left.remove(best)
        finalist = best[1]
        if len(set(finalist.rescued) - covered) < min_new:
            break
        key = (
            json.dumps(finalist.lineage.delta, sort_keys=True),
            *(p.identity for p in finalist.lineage.patches),
        )
        if key in seen_content:
            continue
        seen_content.add(key)
        admitted.append(finalist)
        covered |= set(finalist.rescued)
    return admitted
