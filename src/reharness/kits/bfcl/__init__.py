"""BFCL multi-turn kit: ``bfcl`` (package ``bfcl-eval``, installed with ``--no-deps``, plus ``mpmath``).

Modules: :mod:`.data` (entries, ground truth, function docs, the by-scenario split, call parsing),
:mod:`.backend` (host side of the confined worker), ``worker.py`` (the worker: BFCL's backends and
``multi_turn_checker``, confined; standard library plus ``bfcl_eval``, never ``reharness``), :mod:`.env`,
:mod:`.failures` (detectors: unparsable calls, unknown functions, missing or ill-typed arguments, a forgotten
``cd``), :mod:`.operators` (repairs: call format, required arguments, cd reminder). ``KIT`` is the
entry-point object.
"""

from reharness.envs.kit import EnvKit
from reharness.kits.bfcl.failures import bfcl_findings
from reharness.kits.bfcl.operators import OPERATORS

KIT = EnvKit(
    name="bfcl",
    env="reharness.kits.bfcl.env:BfclEnv",
    summary="BFCL v4 multi-turn: stateful APIs, official multi_turn_checker (test data split by scenario)",
    gym_id="reharness/BFCLMultiTurn-v0",
    harnesses={"base": "reharness.kits.bfcl:harness.yaml", "fc": "reharness.kits.bfcl:harness-fc.yaml"},
    detectors=(bfcl_findings,),
    operators=OPERATORS,
    ctx_fields={"turn": "int", "turns": "int", "current_directory": "str"},
)
