"""One TextWorldExpress JVM per environment instance, serving every episode that instance plays.

:class:`TwxBackend` wraps the package's ``TextWorldExpressEnv`` (which launches ``textworld-express.jar``
through py4j) and talks to its ``PythonInterface`` directly: a new game is ``generateNewGameJSON`` (about a
millisecond), a step is ``stepJSON``. The official fold seeds come from the JAR (``getSeedsTrain`` / ``Dev`` /
``Test``) and are cached per process, as are the games' task descriptions (the same sentence for every seed
of twc, cookingworld and coin; per seed for mapreader, arithmetic, sorting).

Gold paths: the JAR's own (``generateNewGame(..., generateGoldPath=true)``) are random walks drawn from an
*unseeded* ``scala.util.Random`` for every game but CookingWorld, so the same game got a different gold path
in every call (one twc game: 13 to 28 commands) and the solver's trajectories differed between processes.
:meth:`TwxBackend.gold_actions` runs the same gold agents the JAR runs, on a fresh copy of the game, with the
walk seeded by the game seed -- what the JAR already does for CookingWorld,
whose gold paths are therefore unchanged -- so a game has one gold path everywhere. Copies of a game can
share objects (the walk on a sorting game moves the live game's objects), so the caller rebuilds its game
afterwards.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

from reharness.core.errors import EnvError
from reharness.kits.requirements import require_java, require_module

#: reharness split -> TextWorldExpress game fold.
FOLDS = {"train": "train", "valid": "dev", "test": "test"}

_CACHE_LOCK = threading.Lock()
_SEEDS: dict[tuple[str, str, str], list[int]] = {}
_DESCRIPTIONS: dict[tuple[str, str, str, int], str] = {}
#: TWX game -> the JAR's gold agent for it (``textworldexpress.goldagent``).
GOLD_AGENTS = {
    "twc": "TWCGoldAgent",
    "cookingworld": "CookingWorldGoldAgent",
    "coin": "CoinGoldAgent",
    "mapreader": "MapReaderGoldAgent",
    "arithmetic": "ArithmeticGoldAgent",
    "sorting": "SortingGoldAgent",
    "simonsays": "SimonSaysGoldAgent",
    "peckingorder": "PeckingOrderGoldAgent",
}
#: As the JAR: a gold agent that fails (a walk that gave up) is tried again on a fresh game, this many times.
GOLD_ATTEMPTS = 50


class TwxBackend:
    """A TextWorldExpress JVM loaded with one game (``game``, ``params``)."""

    def __init__(self, env_name: str, game: str, params: str) -> None:
        module = require_module("textworld_express", "twx", env_name)
        require_java(env_name)
        try:
            self._env = module.TextWorldExpressEnv(envStepLimit=10**9)
            message = self._env.server.load(game, params)
        except Exception as exc:  # py4j: the JVM did not start or did not answer
            raise EnvError(
                f"{env_name}: the TextWorldExpress JVM failed to start: {type(exc).__name__}: {exc}",
                hint="check `java -version` works (apt-get install default-jre-headless) and that "
                "`python -c 'import textworld_express'` succeeds",
            ) from None
        if message:
            self.close()
            raise EnvError(
                f"{env_name}: TextWorldExpress refused game {game!r} with params {params!r}: {message}"
            )
        self.server = self._env.server
        self.game = game
        self.params = params

    def fold_seeds(self, fold: str) -> list[int]:
        key = (self.game, self.params, fold)
        with _CACHE_LOCK:
            if key not in _SEEDS:
                getter = {"train": self.server.getSeedsTrain, "dev": self.server.getSeedsDev}.get(
                    fold, self.server.getSeedsTest
                )
                _SEEDS[key] = [int(s) for s in getter()]
            return _SEEDS[key]

    def description(self, seed: int, fold: str) -> str | None:
        """The task description of a game (cached per process), or None when it must be generated first."""
        with _CACHE_LOCK:
            return _DESCRIPTIONS.get((self.game, self.params, fold, seed))

    def read_description(self, seed: int, fold: str) -> str:
        """Generate game ``seed`` and read its description (this replaces the game in progress)."""
        self.server.generateNewGameJSON(seed, fold, False)
        text = str(self.server.getTaskDescription()).strip()
        with _CACHE_LOCK:
            _DESCRIPTIONS[(self.game, self.params, fold, seed)] = text
        return text

    def new_game(self, seed: int, fold: str, gold: bool) -> dict[str, Any]:
        return dict(json.loads(self.server.generateNewGameJSON(seed, fold, gold)))

    def gold_actions(self, seed: int, fold: str) -> list[str]:
        """Game ``seed``'s gold action sequence, the same in every call and process (see the module)."""
        jvm = self._env._gateway.jvm
        agent_class = getattr(jvm.textworldexpress.goldagent, GOLD_AGENTS[self.game])
        generator = self.server.gameGenerator()
        walk = jvm.scala.util.Random(seed)
        for _ in range(GOLD_ATTEMPTS):
            found = agent_class(generator.mkGame(seed, fold)).mkGoldPath(walk)
            if found._1:
                return [str(a) for a in found._2]
        raise EnvError(
            f"TextWorldExpress {self.game}: no gold path for seed {seed} of fold {fold!r} "
            f"in {GOLD_ATTEMPTS} attempts",
            hint="this game cannot be played by the solver; use another task",
        )

    def step(self, action: str) -> dict[str, Any]:
        return dict(json.loads(self.server.stepJSON(action)))

    def close(self) -> None:
        env, self._env = getattr(self, "_env", None), None
        if env is not None:
            with contextlib.suppress(Exception):  # the JVM may already be gone
                env.close()
