"""The ``apps`` kit: AppWorld-like apps over SQLite, agent-written Python in a confined interpreter."""

from reharness.envs.kit import EnvKit

KIT = EnvKit(
    name="apps",
    env="reharness.envs.apps.env:AppsEnv",
    summary="AppWorld-like apps over SQLite; agent-written Python in a confined interpreter; DB-diff tests",
    gym_id="reharness/Apps-v0",
    harnesses={"base": "reharness.kits.apps:harness.yaml", "fc": "reharness.kits.apps:harness-fc.yaml"},
)
