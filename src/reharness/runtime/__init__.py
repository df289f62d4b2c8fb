"""Harness runtime: harness configs and overlays, the four hook points, the episode loop and batches.

- :mod:`.harness`: :class:`Harness` = base runtime configuration (:class:`HarnessConfig`) + ordered overlays;
- :mod:`.overlay`: overlays: ordered sets of hooks layered on a base harness;
- :mod:`.effects`: the hook points, the effects a hook may return and their schema;
- :mod:`.context`: prompt building and the ``ctx`` given to hooks;
- :mod:`.view`: read-only views of runtime state for hooks;
- :mod:`.protocols`: action protocols: model output → environment action, and back for scripted agents;
- :mod:`.agents`: the scripted agents (policies that need no model) and :class:`FunctionAgent`;
- :mod:`.agent_specs`: agent specs (a scripted agent's name or a model backend spec) → agents;
- :mod:`.episode`: the async episode loop: one task, one policy, one harness;
- :mod:`.resolved`: a run resolved once (kit, harness, env options, tasks, seeds): :class:`ResolvedRun`;
- :mod:`.executor`: batch execution: many episodes concurrently, appended to the store as each finishes;
- :mod:`.dispatch`: the executor seam: where a batch's episodes run (local or on other machines);
- :mod:`.env_reuse`: idle environments kept between batches, for kits expensive to start (``reuse_envs``);
- :mod:`.ray_executor`: the Ray executor: episodes played by long-lived Ray actors, stored by the driver;
- :mod:`.ray_actors`: starting, mapping the failures of and ending Ray actors (shared with policy training);
- :mod:`.repair`: ``before_action`` hooks repairing a reply that yields no action;
- :mod:`.reply_end`: where a reply's action ends, per protocol (so backends stop there);
- :mod:`.r1`: the ``r1`` dialect: Harness-R1's official ``ctx`` and return rules.
"""

from reharness.runtime.agents import Agent, FunctionAgent, GoldAgent, RandomAgent, SolverAgent
from reharness.runtime.effects import HOOK_POINTS, Effect, EffectError, parse_effect
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.executor import BatchResult, RunSpec, run_batch, run_resolved
from reharness.runtime.harness import Harness, HarnessConfig, base_harness_config, load_harness_config
from reharness.runtime.overlay import CallableOverlay, Overlay, noop_overlay
from reharness.runtime.resolved import ResolvedRun, resolve_run

__all__ = [
    "HOOK_POINTS",
    "Agent",
    "BatchResult",
    "CallableOverlay",
    "Effect",
    "EffectError",
    "EpisodeRunner",
    "FunctionAgent",
    "GoldAgent",
    "Harness",
    "HarnessConfig",
    "Overlay",
    "RandomAgent",
    "ResolvedRun",
    "RunSpec",
    "SolverAgent",
    "base_harness_config",
    "load_harness_config",
    "noop_overlay",
    "parse_effect",
    "resolve_run",
    "run_batch",
    "run_resolved",
]
