"""Environment kits: the built-in environments and the real benchmarks, on the same public API
(:class:`reharness.envs.EnvKit`) that a user's kit uses.

One subpackage per kit; each exposes ``KIT`` in its ``kit.py`` (``twx`` holds eight games: ``KITS``).
The layers below never import a kit: they ask the kit registry (:mod:`reharness.envs.registry`) for what a
named environment provides, so a kit loaded from an entry point gets exactly what a built-in gets.

- :mod:`.household`: ALFWorld-like rooms (Harness-R1's ``alfworld`` ctx);
- :mod:`.shop`: WebShop-like catalogue (``webshop``);
- :mod:`.db`: DBBench on SQLite (``dbbench``), generated tasks or real AgentBench files through ``--data``;
- :mod:`.code`: SWE-Gym-like packages, SWE-bench instance files through ``--data``;
- :mod:`.apps`: AppWorld-like apps.

Each kit package holds one environment: its env modules, ``kit.py`` (its ``KIT``), ``failures.py`` (its
detectors and runtime signals), ``operators.py`` (its repair operators), ``r1.py`` (its Harness-R1 ``ctx``
adapter, where the benchmark has one), ``tiny.py`` (its tiny-agent recipe) and its harness YAMLs.

Real benchmarks that install from the package registries (found through the ``reharness.kits`` entry
points of this distribution, exactly as a user's kit is; :mod:`.registration` registers them in-process
too):

- :mod:`.twx`: the eight TextWorldExpress games, ``twx-twc``, ``twx-cookingworld``, ``twx-coin``, … (a JAR);
- :mod:`.text_games`: what the JAR-backed text games share (the gold-path solver, the command tool, the
  Harness-R1 ctx adapter);
- :mod:`.scienceworld`: ScienceWorld (its JAR): official variation splits, gold paths, fast steps;
- :mod:`.bfcl`: BFCL multi-turn: official data and ``multi_turn_checker``, calls run in a confined worker;
- :mod:`.requirements`: a missing package or Java runtime as one clear error naming the install command.

Importing a kit imports no benchmark: each environment loads its package (and starts its JVM or worker) on
first use.
"""
