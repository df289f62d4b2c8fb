"""A pool: a frozen directory of sibling harnesses for one environment and policy (``reharness-pool-v1``).

Layout::

    POOL/pool.json            format, env, H0 (identity and config), the policy it was evolved against,
                              the directions used, the siblings (id, name, direction, description, delta,
                              patch files, provenance, evidence) and a content hash of all of it
    POOL/patches/ID.yaml      one file per patch (``reharness-patch-v1``), named by the patch's identity
    POOL/profile.json         behaviour profiles (:mod:`.profile`); not frozen — they are re-anchored

A pool is evolved once and never edited during training: :func:`load_pool` recomputes every hash (the
document's, each patch file's identity, each sibling's id from H0 + delta + patches) and refuses a pool in
which anything changed, naming the file and field. A corrupt or partial file is an error naming the file and
field, never a traceback. The contract checked from outside: ``pool.json`` has a ``siblings`` list whose
items carry ``id``, ``name`` and ``direction``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import ConfigError, DataError
from reharness.core.hashing import stable_hash
from reharness.patches.errors import PatchFormatError
from reharness.patches.model import load_patch
from reharness.pool.directions import Direction
from reharness.pool.sibling import Provenance, Sibling
from reharness.runtime.harness import Harness, HarnessConfig

POOL_FORMAT = "reharness-pool-v1"
POOL_FILE = "pool.json"
PATCH_DIR = "patches"


class PatchRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(description="Path relative to the pool directory.")
    id: str = Field(description="The patch's identity (content hash).")


class SiblingEntry(BaseModel):
    """One sibling as stored in ``pool.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str = Field(min_length=1)
    direction: str = Field(min_length=1)
    description: str = ""
    delta: dict[str, Any] = Field(default_factory=dict)
    patches: list[PatchRef] = Field(default_factory=list)
    provenance: Provenance = Field(default_factory=Provenance)
    evidence: dict[str, Any] = Field(default_factory=dict)


class PolicyRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(description="The agent spec the pool was evolved against, e.g. tiny:ENV-S.")
    hash: str | None = Field(None, description="A content hash of the policy's weights, where known.")


class PoolDocument(BaseModel):
    """The whole of ``pool.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["reharness-pool-v1"]
    env: str
    h0: str = Field(description="Identity of the base harness H0.")
    h0_config: dict[str, Any]
    policy: PolicyRef
    directions: list[Direction] = Field(default_factory=list)
    siblings: list[SiblingEntry]
    meta: dict[str, Any] = Field(default_factory=dict, description="How the pool was made (evolve config).")
    content_hash: str = ""

    def body_hash(self) -> str:
        return stable_hash(self.model_dump(mode="json", exclude={"content_hash"}))


class Pool:
    """A loaded (or newly built) pool: H0, the siblings in admission order, and where it lives."""

    def __init__(
        self,
        env: str,
        h0: HarnessConfig,
        siblings: Sequence[Sibling],
        policy: PolicyRef,
        directions: Sequence[Direction] = (),
        meta: dict[str, Any] | None = None,
        path: Path | None = None,
    ) -> None:
        self.env, self.h0, self.policy = env, h0, policy
        self.siblings = list(siblings)
        self.directions = list(directions)
        self.meta = dict(meta or {})
        self.path = path
        ids = [s.id for s in self.siblings]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ConfigError(f"the pool holds sibling(s) {twice} twice", hint="admit each sibling once")
        for sibling in self.siblings:
            if sibling.base != h0:
                raise ConfigError(f"sibling {sibling.name!r} is not built on the pool's H0")

    @property
    def h0_identity(self) -> str:
        return Harness(self.h0).identity

    def get(self, key: str) -> Sibling:
        """A sibling by id, id prefix (8+ characters) or name."""
        for sibling in self.siblings:
            if key in (sibling.id, sibling.name) or (len(key) >= 8 and sibling.id.startswith(key)):
                return sibling
        names = ", ".join(f"{s.name} ({s.id[:8]})" for s in self.siblings) or "none"
        raise ConfigError(f"the pool has no sibling {key!r}", hint=f"its siblings: {names}")

    def document(self) -> PoolDocument:
        entries = [
            SiblingEntry(
                id=s.id,
                name=s.name,
                direction=s.direction,
                description=s.description,
                delta=s.delta,
                patches=[PatchRef(file=f"{PATCH_DIR}/{p.identity}.yaml", id=p.identity) for p in s.patches],
                provenance=s.provenance,
                evidence=s.evidence,
            )
            for s in self.siblings
        ]
        doc = PoolDocument(
            format=POOL_FORMAT,
            env=self.env,
            h0=self.h0_identity,
            h0_config=self.h0.model_dump(mode="json"),
            policy=self.policy,
            directions=self.directions,
            siblings=entries,
            meta=self.meta,
        )
        return doc.model_copy(update={"content_hash": doc.body_hash()})

    def save(self, path: str | Path) -> Path:
        """Write the pool directory (patch files first, ``pool.json`` last and atomically)."""
        root = Path(path)
        if root.exists() and not root.is_dir():
            raise ConfigError(f"pool path {root} is a file", hint="pass a directory (it is created)")
        (root / PATCH_DIR).mkdir(parents=True, exist_ok=True)
        for sibling in self.siblings:
            for patch in sibling.patches:
                target = root / PATCH_DIR / f"{patch.identity}.yaml"
                if not target.exists():
                    patch.dump(target)
        text = json.dumps(self.document().model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        tmp = root / (POOL_FILE + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, root / POOL_FILE)
        self.path = root
        return root


def _field(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc) or "<root>"


def _read_document(file: Path) -> PoolDocument:
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(
            f"{file} is not a text file", hint="pass a pool directory made by `pool evolve`"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{file} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); the pool is "
            "corrupt or was only partly written",
            hint="re-run `reharness pool evolve` with the same --out to rebuild it",
        ) from None
    if not isinstance(data, dict):
        raise DataError(f"{file} must hold a JSON object, got {type(data).__name__}")
    if data.get("format") != POOL_FORMAT:
        raise DataError(
            f"{file}: field 'format' is {data.get('format')!r}, not {POOL_FORMAT!r}",
            hint="pass a pool directory made by `reharness pool evolve`",
        )
    try:
        return PoolDocument.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_field(e['loc'])}: {e['msg']}" for e in exc.errors()[:6])
        raise DataError(
            f"{file} is invalid: {problems}", hint="the pool is corrupt; re-run `pool evolve`"
        ) from None


def load_pool(path: str | Path) -> Pool:
    """Load and verify a frozen pool directory (see the module docstring)."""
    root = Path(path)
    if not root.exists():
        raise ConfigError(f"pool {str(root)!r} does not exist", hint="pass a directory made by `pool evolve`")
    if not root.is_dir():
        raise ConfigError(
            f"pool {root} is a file, not a directory", hint=f"pass the directory holding {POOL_FILE}"
        )
    file = root / POOL_FILE
    if not file.is_file():
        raise DataError(f"{root} has no {POOL_FILE}", hint="pass a directory made by `reharness pool evolve`")
    doc = _read_document(file)
    if doc.content_hash != doc.body_hash():
        raise DataError(
            f"{file} was edited after the pool was frozen (content_hash {doc.content_hash!r} does not match "
            "its content)",
            hint="a pool is frozen: evolve a new one instead of editing it",
        )
    try:
        h0 = HarnessConfig.model_validate(doc.h0_config)
    except ValidationError as exc:
        problems = "; ".join(f"h0_config.{_field(e['loc'])}: {e['msg']}" for e in exc.errors()[:6])
        raise DataError(f"{file} is invalid: {problems}") from None
    if Harness(h0).identity != doc.h0:
        raise DataError(f"{file}: field 'h0' does not match h0_config", hint="the pool is corrupt")
    siblings = []
    for index, entry in enumerate(doc.siblings):
        where = f"{file}: siblings.{index} ({entry.name!r})"
        patches = []
        for ref in entry.patches:
            patch_file = root / ref.file
            if not patch_file.resolve().is_relative_to(root.resolve()):
                raise DataError(f"{where}: patch file {ref.file!r} lies outside the pool directory")
            if not patch_file.is_file():
                raise DataError(f"{where}: patch file {ref.file} is missing", hint="the pool is incomplete")
            try:
                patch = load_patch(patch_file)
            except PatchFormatError as exc:
                raise DataError(f"{where}: patch file {ref.file} is unreadable: {exc}") from None
            if patch.identity != ref.id:
                raise DataError(
                    f"{where}: patch file {ref.file} was edited (identity {patch.identity}, pool.json says "
                    f"{ref.id})",
                    hint="a pool is frozen: evolve a new one instead of editing it",
                )
            patches.append(patch)
        try:
            sibling = Sibling(
                name=entry.name,
                direction=entry.direction,
                base=h0,
                delta=entry.delta,
                patches=patches,
                description=entry.description,
                provenance=entry.provenance,
                evidence=entry.evidence,
            )
        except ConfigError as exc:
            raise DataError(f"{where}: {exc}") from None
        if sibling.id != entry.id:
            raise DataError(
                f"{where}: field 'id' is {entry.id!r} but H0 + delta + patches hash to {sibling.id!r}",
                hint="a pool is frozen: evolve a new one instead of editing it",
            )
        siblings.append(sibling)
    return Pool(doc.env, h0, siblings, doc.policy, doc.directions, doc.meta, path=root)
