"""Harness runtime: harness configs and overlays, the four hook points, the episode loop and batches."""

from reharness.runtime.agents import Agent, FunctionAgent, GoldAgent, RandomAgent, SolverAgent
from reharness.runtime.effects import HOOK_POINTS, Effect, EffectError, parse_effect
from reharness.runtime.episode import EpisodeRunner
from reharness.runtime.executor import BatchResult, RunSpec, run_batch
from reharness.runtime.harness import Harness, HarnessConfig, base_harness_config, load_harness_config
from reharness.runtime.overlay import CallableOverlay, Overlay, noop_overlay

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
    "RunSpec",
    "SolverAgent",
    "base_harness_config",
    "load_harness_config",
    "noop_overlay",
    "parse_effect",
    "run_batch",
]
