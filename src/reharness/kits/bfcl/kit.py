"""The ``bfcl`` kit (:class:`~reharness.envs.EnvKit`), the object of its entry point."""

from reharness.envs.kit import EnvKit
from reharness.kits.bfcl.failures import bfcl_findings
from reharness.kits.bfcl.operators import OPERATORS
from reharness.kits.bfcl.r1 import BfclAdapter

KIT = EnvKit(
    name="bfcl",
    env="reharness.kits.bfcl.env:BfclEnv",
    summary="BFCL v4 multi-turn: stateful APIs, official multi_turn_checker (test data split by scenario)",
    gym_id="reharness/BFCLMultiTurn-v0",
    harnesses={"base": "reharness.kits.bfcl:harness.yaml", "fc": "reharness.kits.bfcl:harness-fc.yaml"},
    detectors=(bfcl_findings,),
    operators=OPERATORS,
    ctx_fields={"turn": "int", "turns": "int", "current_directory": "str"},
    r1_adapter=BfclAdapter,
)
