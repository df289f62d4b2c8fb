"""The r1 adapter of an environment (:func:`make_adapter`): the one its kit names (``EnvKit.r1_adapter``),
and the Harness-R1 benchmarks (:func:`r1_benchmark_registry`: benchmark name -> environment, a
:class:`~reharness.core.registry.Registry`). Environments with no Harness-R1 benchmark have no official
``ctx``."""

from __future__ import annotations

import functools

from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import ConfigError
from reharness.core.registry import Registry
from reharness.envs.registry import BUILTIN_KITS, find_kit, get_kit
from reharness.runtime.r1.adapter import R1Adapter


def adapter_class(env_name: str) -> type[R1Adapter] | None:
    """The r1 adapter class of ``env_name``'s kit (None: no Harness-R1 benchmark)."""
    kit = find_kit(env_name)
    adapter = kit.r1_adapter if kit is not None else None
    return adapter if isinstance(adapter, type) and issubclass(adapter, R1Adapter) else None


@functools.cache
def r1_benchmark_registry() -> Registry[str]:
    """Harness-R1 benchmark name -> environment name, over the built-in kits (read once: they are fixed)."""
    registry: Registry[str] = Registry("Harness-R1 benchmark")
    for name in BUILTIN_KITS:
        adapter = adapter_class(name)
        if adapter is not None:
            registry.add(adapter.benchmark, get_kit(name).name)
    return registry


def r1_benchmarks() -> dict[str, str]:
    """Harness-R1 benchmark name -> environment, over the built-in kits."""
    return dict(r1_benchmark_registry().items())


def r1_benchmark(env: str) -> str:
    """Harness-R1's benchmark name for a reharness environment (the env name itself if it has none)."""
    return next((b for b, e in r1_benchmark_registry().items() if e == env), env)


def make_adapter(env: TextEnvLike, max_steps: int) -> R1Adapter:
    """The adapter for ``env``; an env whose kit names none has no official ``ctx``."""
    cls = adapter_class(getattr(env, "name", ""))
    if cls is None:
        known = ", ".join(f"{e} ({b})" for b, e in r1_benchmark_registry().items())
        raise ConfigError(
            f"r1-dialect patches need a Harness-R1 benchmark; {getattr(env, 'name', env)!r} is none",
            hint=f"run r1 patches on {known}",
        )
    return cls(env, max_steps)
