"""BFCL v4 multi-turn (package ``bfcl-eval``, installed with ``--no-deps``, plus ``mpmath``).

Kit: :mod:`.kit` (the ``bfcl`` kit), ``harness.yaml`` (text protocol) and ``harness-fc.yaml`` (tool calls).

- :mod:`.data`: entries, ground truth, function docs, the by-scenario split, call parsing;
- :mod:`.backend`: the host side of the confined worker;
- :mod:`.worker`: the worker: BFCL's backends and ``multi_turn_checker``, confined (standard library plus
  ``bfcl_eval``, never ``reharness``);
- :mod:`.env`: the environment, graded by the official checker;
- :mod:`.failures`: detectors: unparsable calls, unknown functions, missing or ill-typed arguments, no ``cd``;
- :mod:`.operators`: repairs: call format, required arguments, a ``cd`` reminder;
- :mod:`.r1`: a Harness-R1 ``ctx`` shaped like its DBBench one (Harness-R1 has no BFCL benchmark).
"""
