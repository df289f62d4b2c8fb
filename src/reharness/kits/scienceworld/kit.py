"""The ``scienceworld`` kit (:class:`~reharness.envs.EnvKit`), the object of its entry point."""

from reharness.envs.kit import EnvKit
from reharness.kits.scienceworld.failures import scienceworld_findings
from reharness.kits.scienceworld.operators import OPERATORS
from reharness.kits.scienceworld.r1 import ScienceWorldAdapter

KIT = EnvKit(
    name="scienceworld",
    env="reharness.kits.scienceworld.env:ScienceWorldEnv",
    summary="ScienceWorld: 30 elementary-science tasks, official variation splits, gold paths (needs Java)",
    gym_id="reharness/ScienceWorld-v0",
    harnesses={
        "base": "reharness.kits.scienceworld:harness.yaml",
        "valid": "reharness.kits.scienceworld:harness-valid.yaml",
    },
    detectors=(scienceworld_findings,),
    operators=OPERATORS,
    ctx_fields={"awaiting_choice": "bool"},
    r1_adapter=ScienceWorldAdapter,
    reuse_envs=True,  # one JVM each (1.6 s to start): kept between batches
)
