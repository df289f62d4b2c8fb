"""TextWorldExpress games as reharness text environments (``twx-twc``, ``twx-cookingworld``, ``twx-coin``).

Tasks are the official seed folds (1,000 seeds each: train, dev, test; reharness's ``valid`` split is TWX's
``dev`` fold): task ``i`` of a split is the ``i``-th seed of its fold. The episode is graded by the game's own
score and ``tasksuccess`` flag (``taskfailure`` ends it unsuccessfully). Valid actions come from the game at
every step and are sorted, so their order never depends on the JVM; the same seed and actions give the same
observations in every process.

The scripted solver plays the game's gold action sequence (generated on the first call by the JAR's gold
agent with its walk seeded by the game seed, so every process gets the same path:
:meth:`.TwxBackend.gold_actions`; then the game is rebuilt and the actions taken so far are replayed, so
episodes the solver never plays pay nothing). Gold paths only run from
the start: when an episode's actions leave the gold prefix, ``gold_path_left_at`` records (and, once the
solver asked, each step's ``info``) the step, and the solver keeps playing the remaining gold actions,
which may no longer apply. Actions that change nothing (an invalid command, ``look around``, ``inventory``)
do not move the solver along the path: after them it still plays the next gold action, which is what the
tiny agents' demonstrations (:mod:`.tiny`) need to show a recovery.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from reharness.core.errors import EnvError, did_you_mean
from reharness.envs.base import Task, TextEnv, Transition
from reharness.kits.text_games import GoldPathGame
from reharness.kits.twx.jvm import FOLDS, TwxBackend

_LOCATION = re.compile(r"You are in the ([^.]+)\.")
#: Valid commands that only read the state (the game's own; they never change it), in a fixed order.
READ_ONLY = ("look around", "inventory")


def _normalise(action: str, valid: list[str]) -> str:
    """Collapse whitespace; a command that matches a valid action up to case becomes that action."""
    command = " ".join(action.strip().split())
    if command in valid:
        return command
    lowered = command.lower()
    return next((a for a in valid if a.lower() == lowered), command)


class TwxEnv(GoldPathGame, TextEnv):
    """A TextWorldExpress game (subclasses fix ``game``; ``game_params`` is TWX's generation string)."""

    game: ClassVar[str] = ""
    #: TWX's generation parameters when none are given ("": the game's defaults)
    default_params: ClassVar[str] = ""
    version: ClassVar[int] = 0
    split_size: ClassVar[int] = 1000
    #: Episodes play only admissible actions when an operator forces one (as in ALFWorld).
    restrict_forced_to_admissible: ClassVar[bool] = True

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        game_params: str | None = None,
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        self.game_params = self.default_params if game_params is None else str(game_params)
        self._backend: TwxBackend | None = None
        self._backend_or_raise()  # a missing package or Java fails here, with the install command
        self._valid: list[str] = []
        self._state: dict[str, Any] = {}
        self._history: list[str] = []
        self._unchanged: list[bool] = []  # per command played: it changed nothing (invalid or read-only)
        self._gold: list[str] | None = None
        self._left_gold_at: int | None = None

    def _backend_or_raise(self) -> TwxBackend:
        if self._backend is None:
            self._backend = TwxBackend(self.name, self.game, self.game_params)
        return self._backend

    def close(self) -> None:
        backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        if split not in FOLDS:
            raise EnvError(f"{self.name}: unknown split {split!r}", hint=did_you_mean(split, list(FOLDS)))
        backend = self._backend_or_raise()
        seeds = backend.fold_seeds(FOLDS[split])
        if not 0 <= index < len(seeds):
            raise EnvError(
                f"{self.name}: task index {index} out of range 0..{len(seeds) - 1} of split {split!r}",
                hint=f"the official {FOLDS[split]} fold has {len(seeds)} seeds",
            )
        state = {"game": self.game, "params": self.game_params, "fold": FOLDS[split], "seed": seeds[index]}
        return Task(
            task_id=f"{self.name}/{split}/{index:06d}",
            split=split,
            instruction=self._description(seeds[index], FOLDS[split]),
            task_type=self.game,
            state=state,
        )

    def _description(self, seed: int, fold: str) -> str:
        """The game's task description; reading one generates that game, so an episode in progress is rebuilt
        (the game is deterministic: regenerate it and replay the actions taken)."""
        backend = self._backend_or_raise()
        cached = backend.description(seed, fold)
        if cached is not None:
            return cached
        text = backend.read_description(seed, fold)
        if self.task is not None and self._state:
            self._state = backend.new_game(int(self.task.state["seed"]), str(self.task.state["fold"]), False)
            for command in self._history:
                self._state = backend.step(command)
        return text

    def num_tasks(self) -> int:
        return len(self._backend_or_raise().fold_seeds(FOLDS[self.split]))

    def _load(self, task: Task) -> None:
        if task.state.get("game") != self.game or task.state.get("params", "") != self.game_params:
            raise EnvError(
                f"{self.name}: task {task.task_id!r} is for game {task.state.get('game')!r} "
                f"with params {task.state.get('params')!r}",
                hint=f"use the environment of that game (this one plays {self.game!r})",
            )
        self._state = self._backend_or_raise().new_game(
            int(task.state["seed"]), str(task.state["fold"]), False
        )
        self._valid = sorted(set(self._state["validActions"]))
        self._history = []
        self._unchanged = []
        self._gold = None
        self._left_gold_at = None

    def _initial_observation(self) -> str:
        assert self.task is not None
        return f"{self.task.instruction}\n\n{self._state['observation'].strip()}"

    # ------------------------------------------------------------------ dynamics
    def _transition(self, action: str) -> Transition:
        command = _normalise(action, self._valid)
        invalid = command not in self._valid
        previous = float(self._state.get("score", 0.0))
        self._state = self._backend_or_raise().step(command)
        self._history.append(command)
        self._unchanged.append(invalid or command in READ_ONLY)
        self._valid = sorted(set(self._state["validActions"]))
        if self._left_gold_at is None and self._gold is not None and not self._on_gold():
            self._left_gold_at = self.steps
        raw = float(self._state["score"])
        success = bool(self._state["tasksuccess"])
        failed = bool(self._state["taskfailure"])
        return Transition(
            observation=str(self._state["observation"]).strip(),
            reward=raw - previous,
            done=success or failed,
            success=success,
            score=1.0 if success else min(max(raw, 0.0), 1.0),
            invalid=invalid,
            info={"score_raw": raw, "task_failure": failed, **self._gold_report()},
        )

    def admissible_actions(self) -> list[str] | None:
        return list(self._valid)

    # ------------------------------------------------------------------ the gold-path solver
    def gold_path(self) -> list[str]:
        """The game's gold action sequence from the start (without the leading ``look around``)."""
        if self._gold is None:
            assert self.task is not None
            backend = self._backend_or_raise()
            seed, fold = int(self.task.state["seed"]), str(self.task.state["fold"])
            gold = backend.gold_actions(seed, fold)
            self._gold = gold[1:] if gold and gold[0] == "look around" else gold
            # Some games share objects between their copies (a sorting game's walk empties the live game's
            # shelves), so the live game is rebuilt: the game is deterministic, replay to where it was.
            self._state = backend.new_game(seed, fold, False)
            for command in self._history:
                self._state = backend.step(command)
            if self._left_gold_at is None and not self._on_gold():
                played = next(
                    i for i, a in enumerate(self._history) if i >= len(self._gold) or a != self._gold[i]
                )
                self._left_gold_at = played + 1
        return list(self._gold)

    def expert_action(self) -> str:
        """The next gold action, skipping the commands played so far that changed nothing (a gold action
        played counts as one step along the path; any other state-changing command too, as before)."""
        gold = self.gold_path()
        position = 0
        for command, unchanged in zip(self._history, self._unchanged, strict=True):
            on_path = position < len(gold) and command == gold[position]
            if on_path or not unchanged:
                position += 1
        return gold[position] if position < len(gold) else self.after_gold

    # ------------------------------------------------------------------ tool-calling protocol
    def tools(self) -> list[dict[str, Any]]:
        return self.command_tool(
            f"Run one {self.game} command, e.g. 'look around', 'move north', "
            "'take coin', 'open door to east'. Prefer one of the currently valid actions."
        )

    # ------------------------------------------------------------------ hook views (Harness-R1 ctx)
    def runtime_state(self) -> dict[str, Any]:
        """What the agent could read itself: location, inventory and room text, score, the path it took."""
        look = str(self._state.get("look", ""))
        where = _LOCATION.search(look)
        return {
            "current_location": where.group(1) if where else None,
            "look": look.strip(),
            "inventory": str(self._state.get("inventory", "")).strip(),
            "score": float(self._state.get("score", 0.0)),
            "actions_taken": list(self._history),
        }

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        return {"task_type": self.game, "instruction": self.task.instruction, "game": self.game}


class TwcEnv(TwxEnv):
    """TextWorld Commonsense: put objects away where they belong."""

    name: ClassVar[str] = "twx-twc"
    env_id: ClassVar[str] = "reharness/TwxTwc-v0"
    game: ClassVar[str] = "twc"
    default_max_steps: ClassVar[int] = 50


class TwcEasyEnv(TwcEnv):
    """TextWorld Commonsense in one room with two objects to put away (TWX's generation parameters
    ``numLocations=1,numItemsToPutAway=2``): gold paths of about 5 commands instead of about 16, the
    difficulty a 2-layer tiny agent trained from scratch can partly solve (docs/real-benchmarks.md)."""

    name: ClassVar[str] = "twx-twc-easy"
    env_id: ClassVar[str] = "reharness/TwxTwcEasy-v0"
    default_max_steps: ClassVar[int] = 20
    default_params: ClassVar[str] = "numLocations=1,numItemsToPutAway=2"


class CookingWorldEnv(TwxEnv):
    """CookingWorld: find the recipe and ingredients, prepare and eat the meal."""

    name: ClassVar[str] = "twx-cookingworld"
    env_id: ClassVar[str] = "reharness/TwxCookingWorld-v0"
    game: ClassVar[str] = "cookingworld"
    #: Gold paths reach 120 actions (100 test seeds sampled: 36..120).
    default_max_steps: ClassVar[int] = 150


class CoinEnv(TwxEnv):
    """Coin Collector: navigate rooms and take the coin."""

    name: ClassVar[str] = "twx-coin"
    env_id: ClassVar[str] = "reharness/TwxCoin-v0"
    game: ClassVar[str] = "coin"
    default_max_steps: ClassVar[int] = 50


class MapReaderEnv(TwxEnv):
    """MapReader: read the map, go where it says, bring the object back."""

    name: ClassVar[str] = "twx-mapreader"
    env_id: ClassVar[str] = "reharness/TwxMapReader-v0"
    game: ClassVar[str] = "mapreader"
    default_max_steps: ClassVar[int] = 50


class ArithmeticEnv(TwxEnv):
    """Arithmetic: solve the math problem, pick up the item with that many objects, put it in the box."""

    name: ClassVar[str] = "twx-arithmetic"
    env_id: ClassVar[str] = "reharness/TwxArithmetic-v0"
    game: ClassVar[str] = "arithmetic"
    default_max_steps: ClassVar[int] = 50


class SortingEnv(TwxEnv):
    """Sorting: put objects into the box in order of their quantity."""

    name: ClassVar[str] = "twx-sorting"
    env_id: ClassVar[str] = "reharness/TwxSorting-v0"
    game: ClassVar[str] = "sorting"
    default_max_steps: ClassVar[int] = 50


class SimonSaysEnv(TwxEnv):
    """Simon Says: do exactly what Simon says, nothing else."""

    name: ClassVar[str] = "twx-simonsays"
    env_id: ClassVar[str] = "reharness/TwxSimonSays-v0"
    game: ClassVar[str] = "simonsays"
    default_max_steps: ClassVar[int] = 50


class PeckingOrderEnv(TwxEnv):
    """Pecking Order: read the instruction book and follow its order of steps."""

    name: ClassVar[str] = "twx-peckingorder"
    env_id: ClassVar[str] = "reharness/TwxPeckingOrder-v0"
    game: ClassVar[str] = "peckingorder"
    default_max_steps: ClassVar[int] = 50
