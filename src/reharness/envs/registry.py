"""Registry of the built-in environments: gymnasium ids, short names and construction.

Built-ins are registered with gymnasium under ``reharness/<Name>-v<N>`` when ``reharness`` is imported (an
id and an entry-point string each: the env's module loads only when ``gymnasium.make`` builds one, so the
import stays cheap; gymnasium 1.x no longer reads ``gymnasium.envs`` package entry points, hence the import
hook) and are addressable by short name (``household``, ``shop``, ``db``, ``code``, ``apps``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium

from reharness.core.errors import UnknownNameError, did_you_mean


@dataclass(frozen=True)
class EnvSpec:
    name: str
    gym_id: str
    entry_point: str
    summary: str


BUILTIN_ENVS: dict[str, EnvSpec] = {
    spec.name: spec
    for spec in (
        EnvSpec(
            "household",
            "reharness/Household-v0",
            "reharness.envs.household.env:HouseholdEnv",
            "ALFWorld-like rooms, receptacles and objects; six task types; admissible commands",
        ),
        EnvSpec(
            "shop",
            "reharness/Shop-v0",
            "reharness.envs.shop.env:ShopEnv",
            "WebShop-like catalogue, BM25 search, item pages, WebShop reward",
        ),
        EnvSpec(
            "db",
            "reharness/DB-v0",
            "reharness.envs.db.env:DBEnv",
            "DBBench on SQLite: generated tables or real AgentBench files; text or tool-call protocol",
        ),
        EnvSpec(
            "code",
            "reharness/Code-v0",
            "reharness.envs.code.env:CodeEnv",
            "SWE-Gym-like: generated packages with injected bugs, SWE-agent tools, FAIL_TO_PASS grading",
        ),
        EnvSpec(
            "apps",
            "reharness/Apps-v0",
            "reharness.envs.apps.env:AppsEnv",
            "AppWorld-like apps over SQLite; agent-written Python in a confined interpreter; DB-diff tests",
        ),
    )
}


def register_env(spec: EnvSpec) -> None:
    """Register a user environment so ``make_env``, ``run_batch`` and the CLI can address it by name."""
    BUILTIN_ENVS[spec.name] = spec
    if spec.gym_id not in gymnasium.registry:
        gymnasium.register(id=spec.gym_id, entry_point=spec.entry_point, disable_env_checker=True)


def register_envs() -> None:
    """Register every built-in with gymnasium (idempotent)."""
    for spec in BUILTIN_ENVS.values():
        if spec.gym_id not in gymnasium.registry:
            gymnasium.register(id=spec.gym_id, entry_point=spec.entry_point, disable_env_checker=True)


def resolve_env_name(name: str) -> EnvSpec:
    """Accept a short name or a gymnasium id and return its spec (clear error with suggestions)."""
    for spec in BUILTIN_ENVS.values():
        if name in (spec.name, spec.gym_id):
            return spec
    choices = list(BUILTIN_ENVS) + [s.gym_id for s in BUILTIN_ENVS.values()]
    raise UnknownNameError(f"unknown environment {name!r}", hint=did_you_mean(name, choices))


def env_class(name: str) -> Any:
    """The class of a registered environment, imported without building one (e.g. for ``run_metrics``)."""
    import importlib

    module, _, attr = resolve_env_name(name).entry_point.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_env(name: str, **kwargs: Any) -> Any:
    """Construct a built-in environment by short name or gymnasium id (unwrapped)."""
    spec = resolve_env_name(name)
    register_envs()
    return gymnasium.make(spec.gym_id, **kwargs).unwrapped
