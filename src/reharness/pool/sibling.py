"""Siblings: an environment's base harness H0 plus a direction, a harness-config delta and overlay patches.

A sibling is identified by the content hash of (H0's identity, its delta, its patches' identities), so the
same repair evolved twice gets the same id and an edited one gets another. It loads as an ordinary
:class:`~reharness.runtime.harness.Harness` (:meth:`Sibling.harness`), so everything that runs a harness —
``run``, paired reruns, rescue rollouts — runs a sibling through the same code path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import ConfigError
from reharness.core.hashing import stable_hash
from reharness.patches.model import Patch
from reharness.runtime.harness import Harness, HarnessConfig

#: Harness-config fields a delta may never change (they identify the harness, not its behaviour).
FROZEN_FIELDS = frozenset({"env"})


class Provenance(BaseModel):
    """Where a sibling came from: the engineer, the seed, the evolution generation and the parent sibling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engineer: str = "manual"
    seed: int | None = None
    generation: int = Field(0, ge=0)
    parent: str | None = Field(None, description="Id of the sibling this one was mutated from (None: H0).")


def sibling_id(h0_identity: str, delta: dict[str, Any], patches: Sequence[Patch]) -> str:
    """The content hash that names a sibling."""
    return stable_hash({"h0": h0_identity, "delta": delta, "patches": [p.identity for p in patches]})


def apply_delta(base: HarnessConfig, delta: dict[str, Any], name: str) -> HarnessConfig:
    """``base`` with the fields of ``delta`` replaced (validated like a harness YAML), named ``name``."""
    unknown = sorted(set(delta) - set(HarnessConfig.model_fields))
    if unknown:
        raise ConfigError(
            f"harness delta of {name!r} names unknown field(s) {unknown}",
            hint=f"a delta may change: {', '.join(sorted(set(HarnessConfig.model_fields) - FROZEN_FIELDS))}",
        )
    frozen = sorted(set(delta) & FROZEN_FIELDS)
    if frozen:
        raise ConfigError(f"harness delta of {name!r} may not change {frozen}", hint="remove those fields")
    try:
        return HarnessConfig.model_validate(base.model_dump() | delta | {"name": name})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"harness delta of {name!r} is invalid: {problems}") from None


class Sibling:
    """One sibling harness: H0 + ``direction`` + ``delta`` + ``patches`` (see the module docstring)."""

    def __init__(
        self,
        *,
        name: str,
        direction: str,
        base: HarnessConfig,
        delta: dict[str, Any] | None = None,
        patches: Sequence[Patch] = (),
        description: str = "",
        provenance: Provenance | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.direction = direction
        self.base = base
        self.delta = dict(delta or {})
        self.patches = tuple(patches)
        self.description = description
        self.provenance = provenance or Provenance()
        self.evidence = dict(evidence or {})
        self.config = apply_delta(base, self.delta, name)  # validates the delta now, not at first use
        for patch in self.patches:
            if patch.env is not None and base.env is not None and patch.env != base.env:
                raise ConfigError(
                    f"sibling {name!r}: patch {patch.identity} is for env {patch.env!r}, H0 is {base.env!r}",
                    hint="evolve siblings from patches of the pool's environment",
                )
        # a sibling never changes after construction, so its hashes are computed once (routers and pool
        # documents read them per decision)
        self.h0_identity = Harness(base).identity
        self.id = sibling_id(self.h0_identity, self.delta, self.patches)

    def harness(self, isolation: str = "standard", max_workers: int = 8) -> Harness:
        """The sibling as an ordinary harness: the delta-applied config, one sandboxed overlay per patch."""
        from reharness.patches.overlay import PatchOverlay
        from reharness.patches.sandbox.supervisor import SandboxLimits

        limits = SandboxLimits(isolation=isolation)  # type: ignore[arg-type]
        return Harness(self.config, [PatchOverlay(p, limits, max_workers=max_workers) for p in self.patches])

    def changes(self) -> list[str]:
        """What the sibling changes relative to H0, one short line each (for ``pool show``)."""
        lines = [f"{key}: {_short(value)}" for key, value in sorted(self.delta.items())]
        for patch in self.patches:
            points = ", ".join(patch.points)
            lines.append(f"patch {patch.identity[:8]} ({points}): {_short(patch.description)}")
        return lines or ["(nothing: identical to H0)"]

    def __repr__(self) -> str:
        return f"Sibling(id={self.id!r}, name={self.name!r}, direction={self.direction!r})"


def _short(value: Any, limit: int = 70) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
