"""What an environment's kit tells the tiny-agent recipe (``EnvKit.tiny``): recipes and demonstration rules.

The generic machinery (:mod:`.config` here; :mod:`reharness.training.tiny.demos` and
:mod:`reharness.training.tiny.interventions` in the training layer) plays the kit's solver with DAgger-style
perturbations and renders harness interventions; what counts as a good perturbation, a premature terminal
action, a hint's distractors, a thought, a near miss or a note a harness could write depends on the
environment, so the kit supplies it here. Every field but ``recipes`` is optional; the defaults are generic
(a random admissible action, no premature action, the admissible list as distractors, no thoughts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class ObservedNotes(Protocol):
    """Notes made only of what a harness can observe (no expert action), for kits whose harness cannot
    know the right action (a database query): e.g. the DBBench-like kit's."""

    def problem(self, reply: str, choices: list[str], instruction: str) -> str | None: ...

    def block(self, problem: str | None, error: str, choices: list[str], rng: random.Random) -> str: ...

    def hint(self, problem: str | None, error: str, choices: list[str], rng: random.Random) -> str: ...

    def premature(self, after_error: bool, rng: random.Random) -> str: ...


@dataclass(frozen=True)
class TinySpec:
    """A kit's tiny-agent knowledge (see the module docstring)."""

    #: size (``S``, ``M``) -> recipe fields that differ from the shared base (``steps``, ``max_new_tokens``…)
    recipes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: ``(env, rng) -> action``: an off-expert, non-terminal action (None: draw again)
    perturb: Callable[[Any, random.Random], str | None] | None = None
    #: ``(env, expert, rng) -> action``: a terminal action that would end the episode too early here
    premature: Callable[[Any, str, random.Random], str | None] | None = None
    #: ``env -> names``: what a hint may offer besides the expert's action (default: the admissible list)
    choices: Callable[[Any], tuple[str, ...]] | None = None
    #: ``env -> text``: a thought restating the goal and the observed state, before the action
    thought: Callable[[Any], str] | None = None
    #: ``(env, expert, rng) -> action``: the expert's action with one plausible mistake
    near_miss: Callable[[Any, str, random.Random], str | None] | None = None
    #: ``env -> (statements run, last error kind)``: progress that observed notes report
    progress: Callable[[Any], tuple[int, str]] | None = None
    #: notes that never name the expert's action (``Recipe.observed_notes``)
    notes: ObservedNotes | None = None
