"""ALFWorld-like household environment (``reharness/Household-v0``): rooms, receptacles, six task types."""

from reharness.envs.household.env import HouseholdEnv

__all__ = ["HouseholdEnv"]
