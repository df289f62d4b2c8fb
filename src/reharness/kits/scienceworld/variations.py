"""ScienceWorld's official variation splits, as the JAR reports them (``scienceworld`` 1.2.3).

For every task the JAR's ``getVariationsTrain`` / ``Dev`` / ``Test`` are three consecutive ranges starting at
0, so a task's split is three counts: train holds variations ``0 .. n_train-1``, dev the next ``n_dev``, test
the last ``n_test`` (3,592 / 1,796 / 1,819 in all). Stored here so that listing the tasks of a split needs no
JVM (loading all 30 tasks to ask takes seconds); ``tests/kits/test_scienceworld.py`` checks the table
against the JAR. Tasks are in the JAR's order.
"""

from __future__ import annotations

#: task name -> (train, dev, test) variation counts.
SPLIT_COUNTS: dict[str, tuple[int, int, int]] = {
    "boil": (14, 7, 9),
    "change-the-state-of-matter-of": (14, 7, 9),
    "chemistry-mix": (16, 8, 8),
    "chemistry-mix-paint-secondary-color": (18, 9, 9),
    "chemistry-mix-paint-tertiary-color": (18, 9, 9),
    "find-animal": (150, 75, 75),
    "find-living-thing": (150, 75, 75),
    "find-non-living-thing": (150, 75, 75),
    "find-plant": (150, 75, 75),
    "freeze": (14, 7, 9),
    "grow-fruit": (62, 31, 33),
    "grow-plant": (62, 31, 33),
    "identify-life-stages-1": (6, 3, 5),
    "identify-life-stages-2": (4, 2, 4),
    "inclined-plane-determine-angle": (84, 42, 42),
    "inclined-plane-friction-named-surfaces": (692, 346, 348),
    "inclined-plane-friction-unnamed-surfaces": (80, 40, 42),
    "lifespan-longest-lived": (62, 31, 32),
    "lifespan-longest-lived-then-shortest-lived": (62, 31, 32),
    "lifespan-shortest-lived": (62, 31, 32),
    "measure-melting-point-known-substance": (218, 109, 109),
    "measure-melting-point-unknown-substance": (150, 75, 75),
    "melt": (14, 7, 9),
    "mendelian-genetics-known-plant": (60, 30, 30),
    "mendelian-genetics-unknown-plant": (240, 120, 120),
    "power-component": (10, 5, 5),
    "power-component-renewable-vs-nonrenewable-energy": (10, 5, 5),
    "test-conductivity": (450, 225, 225),
    "test-conductivity-of-unknown-substances": (300, 150, 150),
    "use-thermometer": (270, 135, 135),
}

#: reharness split -> position in the counts tuple.
SPLIT_POSITION = {"train": 0, "valid": 1, "test": 2}


def variations(task: str, split: str) -> range:
    """The official variation numbers of ``task`` in ``split`` (``valid`` is ScienceWorld's dev)."""
    counts = SPLIT_COUNTS[task]
    start = sum(counts[: SPLIT_POSITION[split]])
    return range(start, start + counts[SPLIT_POSITION[split]])
