"""The real-benchmark kits by name, and their registration in this process.

This distribution declares them in the entry-point group ``reharness.kits`` (``pyproject.toml``), so an
installed reharness finds ``--env twx-twc`` exactly as it finds a user's kit. :func:`register_kit_envs`
registers the same kit objects in-process (:func:`reharness.envs.registry.register_kit`), for a source
checkout whose entry points are not installed (tests, ``PYTHONPATH=src``). Idempotent; it imports no
benchmark package.
"""

from __future__ import annotations

from reharness.envs.kit import EnvKit
from reharness.envs.registry import register_kit


def kit_objects() -> dict[str, EnvKit]:
    """Every real-benchmark kit by environment name."""
    from reharness.kits.bfcl.kit import KIT as BFCL
    from reharness.kits.scienceworld.kit import KIT as SCIENCEWORLD
    from reharness.kits.twx.kit import KITS

    return {**KITS, SCIENCEWORLD.name: SCIENCEWORLD, BFCL.name: BFCL}


def register_kit_envs() -> None:
    """Make every real-benchmark kit addressable by name in this process (``--env twx-twc``)."""
    for kit in kit_objects().values():
        register_kit(kit, source="reharness.kits.registration")
