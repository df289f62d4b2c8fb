"""ScienceWorld kit: ``scienceworld`` (package ``scienceworld``, a JAR run through py4j; needs Java).

Modules: :mod:`.variations` (the official variation splits), :mod:`.env` (the environment: direct JAR calls
for speed, canonical observations, gold-path solver, ctx fields), :mod:`.failures` (detectors: numbered
menus answered with a command, ``focus on`` the wrong object, ``look around`` loops), :mod:`.operators`
(repairs: menu answers, a focus guard). ``KIT`` is the entry-point object.
"""

from reharness.envs.kit import EnvKit
from reharness.kits.scienceworld.failures import scienceworld_findings
from reharness.kits.scienceworld.operators import OPERATORS

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
)
