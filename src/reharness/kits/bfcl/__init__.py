"""BFCL multi-turn kit: ``bfcl`` (package ``bfcl-eval``, installed with ``--no-deps``, plus ``mpmath``).

Modules: :mod:`.data` (entries, ground truth, function docs, the by-scenario split, call parsing),
:mod:`.backend` (host side of the confined worker), ``worker.py`` (the worker: BFCL's backends and
``multi_turn_checker``, confined; standard library plus ``bfcl_eval``, never ``reharness``), :mod:`.env`.
"""
