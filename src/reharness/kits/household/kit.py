"""The ``household`` kit: ALFWorld-like rooms, receptacles and objects (Harness-R1's ``alfworld``)."""

from typing import Any

from reharness.envs.kit import EnvKit
from reharness.kits.household import failures
from reharness.kits.household.r1 import HouseholdAdapter
from reharness.kits.household.tiny import TINY

#: How the generic operators are tuned to household.
OPERATOR_SETTINGS: dict[str, dict[str, Any]] = {
    # commands differ from a valid one by one object name ("take keychain 1 from drawer 1" is 0.82 similar
    # to "take book 1 from drawer 1"): a loose default snaps to the wrong object, which broke tasks of
    # tiny:household-S; 0.85 still fixes wording and instance numbers (>= 0.88)
    "snap_to_admissible": {"cutoffs": (0.85, 0.75, 0.6)},
    # agents repeat a failed command after it is blocked; forcing an unexplored place is what ends their
    # loops (tiny:household-S, 30 train tasks: 40% -> 57%), so it is the default here
    "loop_breaker": {
        "modes": ("force", "block", "hint"),
        "advice": "Do something different: go to a place you have not visited yet, open a closed receptacle, "
        "or use an object you already found.",
    },
    "goal_reminder": {"progress": ("current_location", "inventory", "placed_count", "placed_required")},
    "format_reminder": {
        "message": "Your last reply had no valid command. Reply with exactly one line 'Action: <command>', "
        "copying a command from the admissible list."
    },
    "step_warning": {
        "advice": "Finish the task now: take the object you need and put it where the task says."
    },
}

KIT = EnvKit(
    name="household",
    env="reharness.kits.household.env:HouseholdEnv",
    summary="ALFWorld-like rooms, receptacles and objects; six task types; admissible commands",
    gym_id="reharness/Household-v0",
    harnesses={"base": "reharness.kits.household:harness.yaml"},
    signals=failures.signals,
    leakage=failures.leakage,
    operator_settings=OPERATOR_SETTINGS,
    ctx_fields={"placed_count": "int", "target_found": "bool"},
    r1_adapter=HouseholdAdapter,
    tiny=TINY,
)
