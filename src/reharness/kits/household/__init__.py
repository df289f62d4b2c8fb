"""The ``household`` kit: ALFWorld-like rooms, receptacles and objects (Harness-R1's ``alfworld``)."""

from reharness.envs.kit import EnvKit

KIT = EnvKit(
    name="household",
    env="reharness.envs.household.env:HouseholdEnv",
    summary="ALFWorld-like rooms, receptacles and objects; six task types; admissible commands",
    gym_id="reharness/Household-v0",
    harnesses={"base": "reharness.kits.household:harness.yaml"},
    r1_benchmark="alfworld",
)
