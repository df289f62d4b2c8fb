"""The ``r1`` dialect adapter: builds Harness-R1's official ``ctx`` and maps its returns onto our effects.

One adapter per episode (see :func:`make_adapter`). The episode loop feeds it what happened — the reset,
each executed action with its observation, turns without an action — and asks it for the ctx of a hook call
(official hook name, round index, the agent's proposal). The per-benchmark subclasses, which live in the
environment kits (``EnvKit.r1_adapter``), compute every field of the spec from those events and the env's
observable state. ``ctx`` is plain JSON data: the sandbox worker turns it into the official dict
subclass. The adapter never changes the env; the runtime applies effects through its one effect engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.runtime.effects import Effect


@dataclass
class Proposal:
    """One decision as hooks see it.

    ``action``: the agent's parsed env action; ``raw``: its tool argument (or the action text);
    ``final``: the action scheduled (``on_before_action``, maybe forced) or executed (``on_post_step``);
    ``tool``/``arguments``: the tool call, when the agent used one.
    """

    action: str = ""
    raw: str = ""
    final: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, action: str, tool_call: Any, scheduled: str) -> Proposal:
        """The proposal of a parsed ``action`` (from ``tool_call`` when the agent used one)."""
        arguments = getattr(tool_call, "arguments", None)
        arguments = dict(arguments) if isinstance(arguments, dict) else {}
        first = next(iter(arguments.values()), action) if arguments else action
        raw = first if isinstance(first, str) else str(first)  # Harness-R1's raw/value: the first argument
        return cls(action, raw, scheduled, getattr(tool_call, "name", None), arguments)

    def scheduled(self, final: str) -> Proposal:
        """The same proposal with ``final`` as the scheduled or executed action."""
        return replace(self, final=final)


def trailing_run(entries: list[str], value: str) -> int:
    """How many of the last ``entries`` equal ``value`` in a row (repeat counters of the official ctx)."""
    run = 0
    for entry in reversed(entries):
        if entry != value:
            break
        run += 1
    return run


def alfworld_ctx(
    *,
    step: int,
    max_step: int,
    remaining: int,
    raw: str,
    final: str,
    normalized: str,
    in_admissible: bool,
    observation: str,
    admissible: list[str],
    actions: list[str],
    observations: list[str],
    task: dict[str, Any],
    nothing_happens: int,
    invalid_actions: int,
    world: dict[str, Any],
) -> dict[str, Any]:
    """The official ALFWorld-shaped ``ctx`` (action, state counters, task, predicates, history, world), shared
    by every adapter of an ALFWorld-like text game; the adapter says how it counts and what its world is."""
    current = observation.strip().lower()
    state = {
        "nothing_happens_count": nothing_happens,
        "repeated_observation_count": trailing_run(observations, current) if current else 0,
        "repeated_action_count": trailing_run(actions, normalized) if normalized else 0,
        "invalid_action_count": invalid_actions,
        "remaining_steps": remaining,
    }
    return {
        "action": {
            "raw": raw,
            "normalized": normalized,
            "final_action": final,
            "in_admissible": in_admissible,
        },
        "state": state,
        "task": dict(task),
        "predicates": {
            "action_not_admissible": not in_admissible,
            "nothing_happens_repeated": nothing_happens >= 2,
            "same_observation_repeated": state["repeated_observation_count"] >= 2,
            "same_action_repeated": state["repeated_action_count"] >= 2,
            "remaining_steps_low": remaining <= 5,
        },
        "observation": observation,
        "admissible": list(admissible),
        "output": raw,
        "step": step,
        "max_step": max_step,
        "remaining_steps": remaining,
        "history": {"last_actions": list(actions), "last_observations": list(observations)},
        "world": world,
    }


class R1Adapter:
    """Shared bookkeeping of the benchmark adapters; a subclass names its benchmark and conventions."""

    #: The Harness-R1 benchmark name (``alfworld``, ``webshop``, ``dbbench``).
    benchmark = ""
    #: Where ``on_init`` tool hints go when the agent has tools: ``"*"`` into every tool's description, a
    #: tool name into that tool's only, ``None`` into the system prompt.
    tool_hint_target: str | None = None
    #: ``ctx`` fields that mean the same in both dialects (``convert`` translates them; others are refused).
    shared_fields: frozenset[str] = frozenset()
    #: The benchmark forbids string literals that name numbered object instances (ALFWorld's rule).
    forbid_numbered_instances = False

    def __init__(self, env: TextEnvLike, max_steps: int) -> None:
        self.env = env
        self.max_steps = max_steps
        self.observation = ""  # the latest environment observation
        self.shown = ""  # what the agent was shown this round (WebShop: nudges included)
        self.admissible: list[str] = []

    # --- events --------------------------------------------------------------------------------------
    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.observation = self.shown = observation
        self.admissible = list(info.get("admissible_actions") or [])

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        self.observation = self.shown = observation
        self.admissible = list(info.get("admissible_actions") or [])

    def no_action(self, shown: str) -> None:
        """A turn without an action (a format error: the official "no tool call" turn)."""
        self.shown = shown

    def acted(self, action: str) -> None:
        """A turn in which the agent proposed ``action`` (called before any hook sees it)."""

    # --- hooks ---------------------------------------------------------------------------------------
    def fires(self, hook: str, action: str | None) -> bool:
        """Whether the official runtime runs ``hook`` here (DBBench: only for its two tools)."""
        return True

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def action_fields(
        self, hook: str, step: int, proposal: Proposal | None, normalize: Callable[[str], str]
    ) -> dict[str, Any]:
        """The step and proposed-action arguments of :func:`alfworld_ctx`: only the pre-action and post-step
        hooks see a proposal (empty strings elsewhere); ``normalize`` is the benchmark's normal form."""
        acting = hook in ("on_before_action", "on_post_step") and proposal is not None
        raw, final = (proposal.raw, proposal.final or "") if acting and proposal else ("", "")
        return {
            "step": step,
            "max_step": self.max_steps,
            "remaining": self.remaining(hook, step),
            "raw": raw,
            "final": final,
            "normalized": normalize(final or raw),
        }

    def remaining(self, hook: str, step: int) -> int:
        if hook == "on_init":
            return self.max_steps
        return self.max_steps - step - (1 if hook == "on_post_step" else 0)

    def effect_action(self, effect: Effect, proposal: Proposal | None) -> Effect:
        """The per-benchmark rewrite of a forced/rewritten action (WebShop wraps bare values)."""
        return effect
