"""``scienceworld``: ScienceWorld's 30 science tasks as a reharness text environment (JAR through py4j).

Tasks are the official variation splits (:mod:`.variations`; reharness's ``valid`` is ScienceWorld's dev):
task ``i`` of a split walks the tasks in the JAR's order and each task's variations in order. Grading is the
game's own: ``score`` is ScienceWorld's score / 100 (clipped at 0), success is reaching 100, and a negative
score (e.g. ``focus on`` the wrong object) ends the episode as a failure.

Speed: the package's ``step()`` rebuilds the whole valid action–object list after every action (about 20
steps/s); this environment talks to the JAR's interface directly (``step``, ``getScore``, ``getCompleted``:
hundreds of steps/s) and builds the valid list only when asked — :meth:`ScienceWorldEnv.valid_actions`, or
in every ``info`` when the environment is built with ``list_valid_actions=True`` (a harness that shows
admissible actions sets it in ``env_options``). One JVM per environment instance serves all its episodes.

Determinism: the kit starts the JAR itself with identity hash codes fixed (:mod:`.jvm`), so a task's
trajectory does not depend on what the JVM ran before nor on the process; on top, observations are made
canonical by sorting the entries of tab-indented object lists, and valid actions are sorted.

The scripted solver plays the gold action sequence, generated on first use (the task is reloaded with
``generateGoldPath`` and the episode's actions replayed); ``gold_path_left_at`` records (and, once the
solver asked, each step's ``info``) the step where an episode left it.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from reharness.core.errors import EnvError, did_you_mean
from reharness.envs.base import SPLITS, Task, TextEnv, Transition
from reharness.kits.requirements import require_java, require_module
from reharness.kits.scienceworld.jvm import ScienceWorldJvm
from reharness.kits.scienceworld.variations import SPLIT_COUNTS, variations
from reharness.kits.text_games import GoldPathGame

AMBIGUOUS = "Ambiguous request"
#: How the JAR answers a command it cannot parse or match to objects.
INVALID_PREFIXES = ("Unknown action", "No known action matches")


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip("\t"))


def _sorted_block(lines: list[str], depth: int) -> list[str]:
    """Sort sibling entries at ``depth`` tabs, each kept with the deeper lines (its contents) under it."""
    groups: list[list[str]] = []
    for line in lines:
        if _depth(line) <= depth or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    blocks = [
        [group[0], *_sorted_block(group[1:], depth + 1)] if len(group) > 1 else group for group in groups
    ]
    return [line for block in sorted(blocks, key="\n".join) for line in block]


def canonical_text(text: str) -> str:
    """Sort the entries of every tab-indented object list (nested lists too, each under its parent)."""
    lines, out, start = text.split("\n"), [], None
    for i, line in enumerate([*text.split("\n"), ""]):
        if line.startswith("\t") and not line[:1].isdigit():
            start = i if start is None else start
            continue
        if start is not None:
            out.extend(_sorted_block(lines[start:i], 1))
            start = None
        if i < len(lines):
            out.append(line)
    return "\n".join(out)


class ScienceWorldEnv(GoldPathGame, TextEnv):
    """ScienceWorld (see module docstring)."""

    name: ClassVar[str] = "scienceworld"
    env_id: ClassVar[str] = "reharness/ScienceWorld-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 100
    max_observation_chars: ClassVar[int] = 20_000

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        simplification: str = "",
        list_valid_actions: bool = False,
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        self.simplification = str(simplification)
        self.list_valid_actions = bool(list_valid_actions)
        self._index = [(task, v) for task in SPLIT_COUNTS for v in variations(task, split)]
        module = require_module("scienceworld", "scienceworld", self.name)
        require_java(self.name)
        self._jvm = ScienceWorldJvm(module)
        self.server = self._jvm.server
        self._loaded: tuple[str, int, bool] | None = None
        self._history: list[str] = []
        self._gold: list[str] | None = None
        self._left_gold_at: int | None = None
        self._score = 0.0
        self._observation = ""

    def close(self) -> None:
        jvm = getattr(self, "_jvm", None)
        if jvm is not None:
            jvm.close()

    # ------------------------------------------------------------------ tasks
    def num_tasks(self) -> int:
        return len(self._index)

    def generate_task(self, split: str, index: int) -> Task:
        if split not in SPLITS:
            raise EnvError(f"scienceworld: unknown split {split!r}", hint=did_you_mean(split, list(SPLITS)))
        table = (
            self._index
            if split == self.split
            else [(t, v) for t in SPLIT_COUNTS for v in variations(t, split)]
        )
        if not 0 <= index < len(table):
            raise EnvError(f"scienceworld: task index {index} out of range 0..{len(table) - 1} of {split!r}")
        task, variation = table[index]
        return Task(
            task_id=f"scienceworld/{split}/{index:06d}",
            split=split,
            instruction=f"{task} (variation {variation})",
            task_type=task,
            state={"task": task, "variation": variation, "simplification": self.simplification},
        )

    def _load_jar(self, task: str, variation: int, gold: bool) -> None:
        self.server.load(task, variation, self.simplification, gold)
        self._loaded = (task, variation, gold)

    def _load(self, task: Task) -> None:
        name, variation = str(task.state["task"]), int(task.state["variation"])
        if name not in SPLIT_COUNTS:
            raise EnvError(
                f"scienceworld: unknown task {name!r}", hint=did_you_mean(name, list(SPLIT_COUNTS))
            )
        self._load_jar(name, variation, False)
        self._history, self._gold, self._left_gold_at, self._score = [], None, None, 0.0
        self._observation = canonical_text(str(self.server.step("look around")))
        description = str(self.server.freeActionTaskDesc()).strip()
        self._description = description.removeprefix("Task Description:").strip()

    def _initial_observation(self) -> str:
        return f"{self._description}\n\n{self._observation.strip()}"

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task_type": self.task.task_type,
            "instruction": getattr(self, "_description", self.task.instruction),
            "variation": self.task.state["variation"],
        }

    # ------------------------------------------------------------------ dynamics
    def _transition(self, action: str) -> Transition:
        command = " ".join(action.strip().split())
        observation = canonical_text(str(self.server.step(command)))
        self._history.append(command)
        raw = float(self.server.getScore())
        completed = bool(self.server.getCompleted())
        previous, self._score = self._score, raw
        self._observation = observation
        if self._left_gold_at is None and self._gold is not None and not self._on_gold():
            self._left_gold_at = self.steps
        success = raw >= 1.0
        invalid = observation.startswith(INVALID_PREFIXES)
        return Transition(
            observation=observation.strip(),
            reward=raw - previous,
            done=completed or raw < 0 or success,
            success=success,
            score=min(max(raw, 0.0), 1.0),
            invalid=invalid,
            info={"score_raw": raw, "ambiguous": observation.startswith(AMBIGUOUS), **self._gold_report()},
        )

    def valid_actions(self) -> list[str]:
        """The JAR's valid action–object combinations now, sorted (about 0.1 s: ask only when needed)."""
        return sorted(set(str(a) for a in self.server.getValidActionObjectCombinations()))

    def admissible_actions(self) -> list[str] | None:
        return self.valid_actions() if self.list_valid_actions else None

    def random_action(self, rng: random.Random) -> str:
        return rng.choice(self.valid_actions())

    # ------------------------------------------------------------------ the gold-path solver
    def gold_path(self) -> list[str]:
        """The task's gold action sequence from the start (the JAR generates it on a reload)."""
        if self._gold is None:
            assert self.task is not None
            self._load_jar(str(self.task.state["task"]), int(self.task.state["variation"]), True)
            self._gold = [str(a) for a in self.server.getGoldActionSequence()]
            self.server.step("look around")
            for command in self._history:  # deterministic: replay to where the episode is
                self._observation = canonical_text(str(self.server.step(command)))
            if not self._on_gold():
                self._left_gold_at = next(
                    i + 1 for i, a in enumerate(self._history) if i >= len(self._gold) or a != self._gold[i]
                )
        return list(self._gold)

    # ------------------------------------------------------------------ tool-calling protocol
    def tools(self) -> list[dict[str, Any]]:
        return self.command_tool(
            "Run one ScienceWorld command, e.g. 'look around', 'go to kitchen', "
            "'pick up thermometer', 'focus on water', 'wait1', or the number that answers a "
            "disambiguation question."
        )

    # ------------------------------------------------------------------ hook views (Harness-R1 ctx)
    def runtime_state(self) -> dict[str, Any]:
        """The agent's view: score so far, whether a disambiguation menu is open, the path it took."""
        return {
            "score": self._score,
            "awaiting_choice": self._observation.startswith(AMBIGUOUS),
            "last_observation": self._observation,
            "actions_taken": list(self._history),
        }
