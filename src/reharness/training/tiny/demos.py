"""Solver demonstrations with recovery, rendered through the env's base harness.

Each demonstration is one whole episode played by :class:`PerturbedSolver` inside the real
:class:`~reharness.runtime.EpisodeRunner` under ``Harness.base(env)``, so the chat messages are exactly what a
language model would be prompted with (system + first user turn + alternating assistant/user turns).

DAgger-style recovery: at each decision the solver, with probability ``perturb_prob``, takes a
*perturbation* instead of the expert action: a random admissible/well-formed action, or what the env's kit
draws (``EnvKit.tiny``, :class:`~reharness.models.tiny.spec.TinySpec`: a near miss, an absent take …).
With ``repeat_prob`` a perturbation is repeated on the next turn (runs of the same failed command, the loop
trained agents fall into after an invalid action). Perturbed assistant turns are marked unsupervised; the
expert's following turns are supervised, so the data contains off-path states (an invalid action, a wrong
page, an error) labelled with the correct way back. Perturbations that would end the episode are not drawn.

Everything is a pure function of (env, split, episode count, seed, perturbation settings): same arguments,
same demonstrations (tested).
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from reharness.core.agent import Agent
from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import ConfigError
from reharness.core.hashing import derive_seed
from reharness.core.types import ChatRequest, ChatResponse, Message
from reharness.envs.registry import find_kit, make_env
from reharness.models.tiny.spec import TinySpec
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.harness import Harness
from reharness.runtime.protocols import render_action
from reharness.training.tiny.interventions import InterventionRates, TurnFacts, add_interventions

_NUMBER = re.compile(r"\b\d+\b")


@dataclass(frozen=True)
class Demo:
    """One rendered episode: its messages and which assistant turns are supervised."""

    env: str
    task_id: str
    seed: int
    messages: tuple[Message, ...]
    supervised: tuple[bool, ...]  # one flag per assistant message, in order
    success: bool

    @property
    def num_turns(self) -> int:
        return len(self.supervised)

    def as_dicts(self) -> list[dict[str, str]]:
        """Messages as ``{"role", "content"}`` dicts (what chat templates take)."""
        return [{"role": m.role, "content": m.content} for m in self.messages]


def tiny_spec(env_name: str) -> TinySpec:
    """The tiny-agent knowledge of ``env_name``'s kit (the generic defaults when it brings none)."""
    kit = find_kit(env_name)
    spec = getattr(kit, "tiny", None) if kit is not None else None
    return spec if isinstance(spec, TinySpec) else TinySpec()


def _choices(env_name: str, env: TextEnvLike) -> tuple[str, ...]:
    """Names a hint may offer besides the expert's action: the kit's, or the admissible actions."""
    spec = tiny_spec(env_name)
    if spec.choices is not None:
        return tuple(spec.choices(env))
    return tuple(env.admissible_actions() or ())


def perturbation(env_name: str, env: TextEnvLike, rng: random.Random) -> str | None:
    """A non-terminal off-expert action for ``env`` (None: none found in a few draws)."""
    draw = tiny_spec(env_name).perturb
    for _ in range(8):
        action = draw(env, rng) if draw else str(env.random_action(rng))
        if action and action != env.expert_action():
            return action
    return None


class PerturbedSolver(Agent):
    """The env's expert that takes a perturbation with probability ``perturb_prob`` (recorded per turn)."""

    policy_id = "perturbed-solver"

    def __init__(
        self,
        env_name: str,
        perturb_prob: float,
        thoughts: bool = False,
        env: TextEnvLike | None = None,
        protocol: str = "text",
        record_facts: bool = False,
        repeat_prob: float = 0.0,
        near_miss: float = 0.0,
    ) -> None:
        self.env_name = env_name
        self.repeat_prob = repeat_prob
        self.near_miss = near_miss
        self.sql_seen = 0  # statements run so far, and how many of them succeeded (for turn facts)
        self.sql_ok = 0
        self.previous_perturbation: str | None = None
        self.record_facts = record_facts  # only demos with interventions need them (costly per turn)
        self.perturb_prob = perturb_prob
        self.thoughts = thoughts
        self.env = env
        self.protocol = protocol
        self.supervised: list[bool] = []
        self.facts: list[TurnFacts] = []
        self.last_request: ChatRequest | None = None
        self.last_response: ChatResponse | None = None

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        return PerturbedSolver(
            self.env_name,
            self.perturb_prob,
            self.thoughts,
            env,
            protocol,
            self.record_facts,
            self.repeat_prob,
            self.near_miss,
        )

    @property
    def episode_env(self) -> TextEnvLike:
        """The env of the episode this copy plays (``start_episode`` gives each episode its own copy)."""
        if self.env is None:
            raise RuntimeError("PerturbedSolver.complete() called outside an episode (no start_episode)")
        return self.env

    def _observe_progress(self, progress: Any) -> None:
        """Note what the previous turn's statement did (its error kind) and count successful ones (the kit's
        ``progress``: statements run so far and the last error kind)."""
        count, kind = progress(self.episode_env)
        if count > self.sql_seen:
            if self.facts:
                self.facts[-1] = replace(self.facts[-1], error=kind)
            self.sql_ok += kind == "none"
            self.sql_seen = count

    async def complete(self, request: ChatRequest) -> ChatResponse:
        env = self.episode_env
        rng = random.Random(derive_seed("perturb", request.seed))
        spec = tiny_spec(self.env_name)
        thought = spec.thought(env) if self.thoughts and spec.thought is not None else None
        expert = str(env.expert_action())
        action: str | None = None
        repeat = self.previous_perturbation
        if self.repeat_prob and repeat is not None and repeat != expert and rng.random() < self.repeat_prob:
            action = repeat  # the same mistake again: trained agents loop on a failed command
        elif rng.random() < self.perturb_prob:
            if self.near_miss and rng.random() < self.near_miss and spec.near_miss is not None:
                action = spec.near_miss(env, expert, rng)
            if action is None:
                action = perturbation(self.env_name, env, rng)
        self.previous_perturbation = action
        self.supervised.append(action is None)
        if self.record_facts:
            if spec.progress is not None:
                self._observe_progress(spec.progress)
            premature = spec.premature(env, expert, rng) if spec.premature is not None else None
            self.facts.append(
                TurnFacts(
                    expert=expert,
                    perturbed=action is not None,
                    choices=_choices(self.env_name, env),
                    premature=(
                        render_action(self.protocol, premature, env, thought).text if premature else None
                    ),
                    queried=self.sql_ok > 0,
                )
            )
        if action is None:
            action = expert
        response = render_action(self.protocol, action, env, thought)
        self.last_request, self.last_response = request, response
        return response


class _Recorder(Agent):
    """Hands each episode a fresh :class:`PerturbedSolver` and keeps it for reading afterwards."""

    policy_id = "perturbed-solver"

    def __init__(
        self,
        env_name: str,
        perturb_prob: float,
        thoughts: bool,
        record_facts: bool,
        repeat_prob: float,
        near_miss: float = 0.0,
    ) -> None:
        self.env_name, self.perturb_prob, self.thoughts = env_name, perturb_prob, thoughts
        self.record_facts, self.repeat_prob, self.near_miss = record_facts, repeat_prob, near_miss
        self.bound: PerturbedSolver | None = None

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        self.bound = PerturbedSolver(
            self.env_name,
            self.perturb_prob,
            self.thoughts,
            env,
            protocol,
            self.record_facts,
            self.repeat_prob,
            self.near_miss,
        )
        return self.bound

    async def complete(self, request: ChatRequest) -> ChatResponse:  # pragma: no cover - never called
        raise RuntimeError("_Recorder only binds per-episode solvers")


@dataclass
class DemoStats:
    """Counts of a demonstration set (recorded in ``provenance.json``)."""

    episodes: int = 0
    successes: int = 0
    turns: int = 0
    supervised_turns: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, demo: Demo) -> None:
        self.episodes += 1
        self.successes += int(demo.success)
        self.turns += demo.num_turns
        self.supervised_turns += sum(demo.supervised)

    def as_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "successes": self.successes,
            "turns": self.turns,
            "supervised_turns": self.supervised_turns,
            "perturbed_turns": self.turns - self.supervised_turns,
            **self.extra,
        }


def render_demo(
    env: TextEnvLike,
    env_name: str,
    harness: Harness,
    index: int,
    seed: int,
    perturb_prob: float,
    thoughts: bool = False,
    interventions: InterventionRates | None = None,
    repeat_prob: float = 0.0,
    near_miss: float = 0.0,
) -> Demo:
    """Play task ``index`` with the perturbed solver and return the whole conversation (with harness
    interventions added when ``interventions`` is given; see :mod:`.interventions`)."""
    recorder = _Recorder(
        env_name,
        perturb_prob,
        thoughts,
        record_facts=interventions is not None,
        repeat_prob=repeat_prob,
        near_miss=near_miss,
    )
    episode_seed = derive_seed("demo", seed, index)
    task = env.get_task(index)
    record = asyncio.run(
        EpisodeRunner(env, recorder, harness).run(task, seed=episode_seed, episode_index=index)
    )
    solver = recorder.bound
    assert solver is not None and solver.last_request is not None and solver.last_response is not None
    messages = (*solver.last_request.messages, Message(role="assistant", content=solver.last_response.text))
    n_assistant = sum(m.role == "assistant" for m in messages)
    if n_assistant != len(solver.supervised):  # the base harness keeps every turn; anything else is a bug
        raise RuntimeError(
            f"{env_name}: conversation has {n_assistant} replies for {len(solver.supervised)} turns"
        )
    supervised = tuple(solver.supervised)
    if interventions is not None:
        facts = [
            replace(fact, invalid="invalid_action" in step.flags)
            for fact, step in zip(solver.facts, record.steps, strict=True)
        ]
        rng = random.Random(derive_seed("interventions", seed, index))
        notes = tiny_spec(env_name).notes
        messages, supervised = add_interventions(
            messages, supervised, facts, harness.config, record.instruction, rng, interventions, notes
        )
    return Demo(
        env=env_name,
        task_id=record.task_id,
        seed=episode_seed,
        messages=messages,
        supervised=supervised,
        success=record.success,
    )


def demo_task_indices(env_name: str, n: int, seed: int, split: str, num_tasks: int) -> list[int]:
    """The task indices of ``split`` whose demonstrations a tiny agent of ``seed`` is trained on (a seeded
    sample of ``n``), recomputable from its provenance (:mod:`reharness.training.unseen_tasks`)."""
    if n > num_tasks:
        raise ConfigError(
            f"{n} demonstrations asked of {env_name}'s {num_tasks} {split} tasks (one per task)",
            hint=f"ask for at most {num_tasks} (`agent train --demos N`, or fewer --steps / a larger epochs)",
        )
    rng = random.Random(derive_seed("demo-tasks", env_name, split, seed))
    return rng.sample(range(num_tasks), n)


def iter_demos(
    env_name: str,
    n: int,
    seed: int = 0,
    perturb_prob: float = 0.12,
    split: str = "train",
    thoughts: bool = False,
    interventions: InterventionRates | None = None,
    repeat_prob: float = 0.0,
    near_miss: float = 0.0,
) -> Iterator[Demo]:
    """Render ``n`` demonstrations from ``split`` (task ``i`` of a seeded sample; deterministic)."""
    harness = Harness.base(env_name)
    env = make_env(env_name, split=split, **harness.config.env_options)
    for index in demo_task_indices(env_name, n, seed, split, env.num_tasks()):
        yield render_demo(
            env, env_name, harness, index, seed, perturb_prob, thoughts, interventions, repeat_prob, near_miss
        )


def render_demos(
    env_name: str,
    n: int,
    seed: int = 0,
    perturb_prob: float = 0.12,
    split: str = "train",
    thoughts: bool = False,
    interventions: InterventionRates | None = None,
    repeat_prob: float = 0.0,
    near_miss: float = 0.0,
) -> tuple[list[Demo], DemoStats]:
    """All ``n`` demonstrations and their counts."""
    demos, stats = [], DemoStats()
    for demo in iter_demos(
        env_name, n, seed, perturb_prob, split, thoughts, interventions, repeat_prob, near_miss
    ):
        demos.append(demo)
        stats.add(demo)
    return demos, stats
