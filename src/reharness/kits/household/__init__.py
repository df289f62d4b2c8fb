"""ALFWorld-like household environment (``reharness/Household-v0``): rooms, receptacles, six task types."""

from reharness.kits.household.env import HouseholdEnv

__all__ = ["HouseholdEnv"]
