"""Built-in text environments (household, shop, db, code, apps) and the public environment checker.

Importing this package registers the built-ins with gymnasium (ids and entry-point strings only, see
:mod:`.registry`); the env base classes and the checker load on first use, so ``import reharness`` stays
cheap.
"""

from typing import TYPE_CHECKING, Any

from reharness.envs.registry import (
    BUILTIN_ENVS,
    EnvSpec,
    make_env,
    register_env,
    register_envs,
    resolve_env_name,
)

if TYPE_CHECKING:
    from reharness.envs.base import Task, TextEnv, Transition, UnicodeText, task_identity
    from reharness.envs.check import check_env

register_envs()

__all__ = [
    "BUILTIN_ENVS",
    "EnvSpec",
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
