"""The ``apps`` kit: AppWorld-like apps over SQLite, agent-written Python in a confined interpreter."""

from reharness.envs.kit import EnvKit
from reharness.kits.apps import failures
from reharness.kits.apps.operators import ApiDocLookup, LoginFirst, PaginationReminder
from reharness.kits.apps.tiny import TINY

KIT = EnvKit(
    name="apps",
    env="reharness.kits.apps.env:AppsEnv",
    summary="AppWorld-like apps over SQLite; agent-written Python in a confined interpreter; DB-diff tests",
    gym_id="reharness/Apps-v0",
    harnesses={"base": "reharness.kits.apps:harness.yaml", "fc": "reharness.kits.apps:harness-fc.yaml"},
    detectors=(failures.detect,),
    operators=(ApiDocLookup(), LoginFirst(), PaginationReminder()),
    generic_operators=(),
    tiny=TINY,
)
