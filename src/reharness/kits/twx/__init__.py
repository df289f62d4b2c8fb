"""TextWorldExpress kit: ``twx-twc``, ``twx-cookingworld`` and ``twx-coin`` (package ``textworld-express``).

Modules: :mod:`.jvm` (one JVM per environment instance, the official fold seeds), :mod:`.env` (the
environments, gold-path solver, Harness-R1 ctx fields).
"""
