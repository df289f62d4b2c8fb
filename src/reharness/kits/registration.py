"""Register the real-benchmark environments by name, until the kit registry finds them itself.

:func:`register_kit_envs` adds ``twx-twc``, ``twx-cookingworld``, ``twx-coin``, ``scienceworld`` and ``bfcl``
to the environment registry (:func:`reharness.envs.register_env`: entry-point strings only, so nothing
heavy loads until an environment is built). It is idempotent.
"""

from __future__ import annotations

from reharness.envs.registry import EnvSpec, register_env

KIT_ENVS: tuple[EnvSpec, ...] = (
    EnvSpec(
        "twx-twc",
        "reharness/TwxTwc-v0",
        "reharness.kits.twx.env:TwcEnv",
        "TextWorldExpress TextWorld Commonsense (official seed folds, gold paths; needs Java)",
    ),
    EnvSpec(
        "twx-cookingworld",
        "reharness/TwxCookingWorld-v0",
        "reharness.kits.twx.env:CookingWorldEnv",
        "TextWorldExpress CookingWorld (official seed folds, gold paths; needs Java)",
    ),
    EnvSpec(
        "twx-coin",
        "reharness/TwxCoin-v0",
        "reharness.kits.twx.env:CoinEnv",
        "TextWorldExpress Coin Collector (official seed folds, gold paths; needs Java)",
    ),
    EnvSpec(
        "scienceworld",
        "reharness/ScienceWorld-v0",
        "reharness.kits.scienceworld.env:ScienceWorldEnv",
        "ScienceWorld: 30 science tasks, official variation splits, gold paths (needs Java)",
    ),
    EnvSpec(
        "bfcl",
        "reharness/BFCLMultiTurn-v0",
        "reharness.kits.bfcl.env:BfclEnv",
        "BFCL v4 multi-turn: stateful APIs, official multi_turn_checker (test data split by scenario)",
    ),
)


def register_kit_envs() -> None:
    """Make every kit environment addressable by name (``--env twx-twc``)."""
    for spec in KIT_ENVS:
        register_env(spec)
