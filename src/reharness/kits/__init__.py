"""Environment kits: the built-in environments and the real benchmarks, on the same public API
(:class:`reharness.envs.EnvKit`) that a user's kit uses.

One subpackage per kit; each exposes ``KIT``. The layers below never import a kit: they ask the kit registry
(:mod:`reharness.envs.registry`) for what a named environment provides, so a kit loaded from an entry point
gets exactly what a built-in gets.

- :mod:`.household`: ALFWorld-like rooms (Harness-R1's ``alfworld`` ctx);
- :mod:`.shop`: WebShop-like catalogue (``webshop``);
- :mod:`.db`: DBBench on SQLite (``dbbench``), generated tasks or real AgentBench files through ``--data``;
- :mod:`.code`: SWE-Gym-like packages, SWE-bench instance files through ``--data``;
- :mod:`.apps`: AppWorld-like apps.

Each kit package holds one environment: its env modules, ``kit.py`` (its ``KIT``), ``failures.py`` (its
detectors and runtime signals), ``operators.py`` (its repair operators), ``r1.py`` (its Harness-R1 ``ctx``
adapter, where the benchmark has one), ``tiny.py`` (its tiny-agent recipe) and its harness YAMLs.
"""
