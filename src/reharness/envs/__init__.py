"""Environments: the text-environment base class, the environment-kit API and registry, and the checker.

- :mod:`.base`: :class:`TextEnv`, the base class of reharness's text environments, and :class:`Task`;
- :mod:`.kit`: :class:`EnvKit`: everything reharness knows about one environment, in one place;
- :mod:`.registry`: the kit registry that every command's ``--env NAME`` resolves through;
- :mod:`.gym_adapter`: ``--env gym:ID``: any gymnasium text environment, with no kit, through every command;
- :mod:`.check`: :func:`check_env`: validate any text environment against the reharness contract.

Importing this package registers the built-ins with gymnasium (ids and entry-point strings only, see
:mod:`.registry`); the env base classes and the checker load on first use, so ``import reharness`` stays
cheap.
"""

from typing import TYPE_CHECKING, Any

from reharness.envs.kit import EnvKit
from reharness.envs.registry import (
    BUILTIN_ENVS,
    BUILTIN_KITS,
    EnvSpec,
    all_kits,
    find_kit,
    get_kit,
    make_env,
    register_env,
    register_envs,
    register_kit,
    resolve_env_name,
)

if TYPE_CHECKING:
    from reharness.envs.base import Task, TextEnv, Transition, UnicodeText, task_identity
    from reharness.envs.check import check_env

register_envs()

__all__ = [
    "BUILTIN_ENVS",
    "BUILTIN_KITS",
    "EnvKit",
    "EnvSpec",
    "all_kits",
    "find_kit",
    "get_kit",
    "register_kit",
    "Task",
    "TextEnv",
    "Transition",
    "UnicodeText",
    "check_env",
    "make_env",
    "register_env",
    "register_envs",
    "resolve_env_name",
    "task_identity",
]

_LAZY = {
    "Task": "reharness.envs.base",
    "TextEnv": "reharness.envs.base",
    "Transition": "reharness.envs.base",
    "UnicodeText": "reharness.envs.base",
    "task_identity": "reharness.envs.base",
    "check_env": "reharness.envs.check",
}


def __getattr__(name: str) -> Any:  # lazy: env code loads only when an env or the checker is used
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reharness.envs' has no attribute {name!r}")
