"""Environment kits: real benchmarks that install from the package registries, on the public env API.

Modules:

- :mod:`.requirements` — checks for an optional package or a Java runtime, with the exact install command;
- :mod:`.registration` — registers the kits' environments by name (``twx-twc``, ``twx-cookingworld``,
  ``twx-coin``, ``scienceworld``, ``bfcl``) through :func:`reharness.envs.register_env`;
- :mod:`.twx` — TextWorldExpress (its JAR through py4j): official seed folds, gold-path solver;
- :mod:`.scienceworld` — ScienceWorld (its JAR): official variation splits, gold-path solver, fast steps;
- :mod:`.bfcl` — BFCL multi-turn: official data and ``multi_turn_checker``, calls run in a confined worker.

The kits layer sits above ``engineer`` and below ``pool``; nothing below imports it. Importing this package
imports no benchmark: each environment loads its package (and starts its JVM or worker) on first use.
"""
