"""The TextWorldExpress kits: one :class:`~reharness.envs.EnvKit` per game (``KITS``), each the object of an
entry point (``TWC``, ``COOKINGWORLD``, …)."""

from reharness.envs.kit import EnvKit
from reharness.kits.twx.failures import text_game_findings
from reharness.kits.twx.r1 import TwxAdapter
from reharness.kits.twx.tiny import TINY, TINY_COIN, TINY_EASY
from reharness.models.tiny.spec import TinySpec

_HARNESSES = {"base": "reharness.kits.twx:harness.yaml", "valid": "reharness.kits.twx:harness-valid.yaml"}
_CTX = {"current_location": "str", "inventory": "str"}


def _kit(name: str, cls: str, gym_id: str, summary: str, tiny: TinySpec = TINY) -> EnvKit:
    return EnvKit(
        name=name,
        env=f"reharness.kits.twx.env:{cls}",
        summary=summary,
        gym_id=gym_id,
        harnesses=_HARNESSES,
        detectors=(text_game_findings,),
        ctx_fields=_CTX,
        r1_adapter=TwxAdapter,
        tiny=tiny,
        reuse_envs=True,  # one JVM each: kept between batches
    )


TWC = _kit(
    "twx-twc",
    "TwcEnv",
    "reharness/TwxTwc-v0",
    "TextWorldExpress TextWorld Commonsense: put objects where they belong (official seed folds; needs Java)",
)
TWC_EASY = _kit(
    "twx-twc-easy",
    "TwcEasyEnv",
    "reharness/TwxTwcEasy-v0",
    "TextWorldExpress TextWorld Commonsense, one room and two objects to put away (needs Java)",
    tiny=TINY_EASY,
)
COOKINGWORLD = _kit(
    "twx-cookingworld",
    "CookingWorldEnv",
    "reharness/TwxCookingWorld-v0",
    "TextWorldExpress CookingWorld: follow the recipe, cook, eat (official seed folds; needs Java)",
)
COIN = _kit(
    "twx-coin",
    "CoinEnv",
    "reharness/TwxCoin-v0",
    "TextWorldExpress Coin Collector: find and take the coin (official seed folds; needs Java)",
    tiny=TINY_COIN,
)
MAPREADER = _kit(
    "twx-mapreader",
    "MapReaderEnv",
    "reharness/TwxMapReader-v0",
    "TextWorldExpress MapReader: read the map, fetch the object (official seed folds; needs Java)",
)
ARITHMETIC = _kit(
    "twx-arithmetic",
    "ArithmeticEnv",
    "reharness/TwxArithmetic-v0",
    "TextWorldExpress Arithmetic: solve, pick the matching item (official seed folds; needs Java)",
)
SORTING = _kit(
    "twx-sorting",
    "SortingEnv",
    "reharness/TwxSorting-v0",
    "TextWorldExpress Sorting: box objects by quantity (official seed folds; needs Java)",
)
SIMONSAYS = _kit(
    "twx-simonsays",
    "SimonSaysEnv",
    "reharness/TwxSimonSays-v0",
    "TextWorldExpress Simon Says: do only what Simon says (official seed folds; needs Java)",
)
PECKINGORDER = _kit(
    "twx-peckingorder",
    "PeckingOrderEnv",
    "reharness/TwxPeckingOrder-v0",
    "TextWorldExpress Pecking Order: follow the instruction book (official seed folds; needs Java)",
)
KITS = {
    kit.name: kit
    for kit in (TWC, TWC_EASY, COOKINGWORLD, COIN, MAPREADER, ARITHMETIC, SORTING, SIMONSAYS, PECKINGORDER)
}
