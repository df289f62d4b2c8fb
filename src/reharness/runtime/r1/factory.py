"""The r1 adapter of an environment (:func:`make_adapter`): one level above the per-benchmark adapters it
picks from, so that :mod:`.adapter` (their base) never imports them."""

from __future__ import annotations

from typing import Any

from reharness.core.errors import ConfigError
from reharness.runtime.r1.adapter import R1Adapter


def make_adapter(env: Any, max_steps: int) -> R1Adapter:
    """The adapter for ``env`` (household, shop or db); other envs have no official ``ctx``."""
    from reharness.runtime.r1.db import DBAdapter
    from reharness.runtime.r1.household import HouseholdAdapter
    from reharness.runtime.r1.shop import ShopAdapter

    adapters: dict[str, type[R1Adapter]] = {
        "household": HouseholdAdapter,
        "shop": ShopAdapter,
        "db": DBAdapter,
    }
    cls = adapters.get(getattr(env, "name", ""))
    if cls is None:
        raise ConfigError(
            f"r1-dialect patches need a Harness-R1 benchmark; {getattr(env, 'name', env)!r} is none",
            hint="run r1 patches on household (alfworld), shop (webshop) or db (dbbench)",
        )
    return cls(env, max_steps)
