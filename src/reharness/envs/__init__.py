"""Built-in text environments (household, shop, db) and the public environment checker."""

from reharness.envs.base import Task, TextEnv, Transition, UnicodeText, task_identity
from reharness.envs.registry import (
    BUILTIN_ENVS,
    EnvSpec,
    make_env,
    register_env,
    register_envs,
    resolve_env_name,
)

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


def __getattr__(name: str):  # lazy: the checker is only needed by tests and users validating envs
    if name == "check_env":
        from reharness.envs.check import check_env

        return check_env
    raise AttributeError(name)
