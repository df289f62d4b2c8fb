"""TextWorldExpress: all eight games of the ``textworld-express`` package (its JAR through py4j; needs Java).

Kit: :mod:`.kit` (``KITS``: ``twx-twc``, ``twx-cookingworld``, ``twx-coin`` — the contract — and
``twx-mapreader``, ``twx-arithmetic``, ``twx-sorting``, ``twx-simonsays``, ``twx-peckingorder``),
``harness.yaml`` (the base harness) and ``harness-valid.yaml`` (valid actions shown).

- :mod:`.jvm`: one JVM per environment instance, the official fold seeds, task descriptions;
- :mod:`.env`: the environments: official seed folds, gold-path solver, ctx fields;
- :mod:`.failures`: detectors of what agents get wrong in text games (shared with ScienceWorld);
- :mod:`.r1`: Harness-R1's ALFWorld-shaped ``ctx`` for text games;
- :mod:`.tiny`: the tiny-agent recipe (gold paths with detours that change nothing).
"""
