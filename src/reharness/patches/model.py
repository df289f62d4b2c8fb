"""The patch object and its two document formats.

``reharness-patch-v1`` (JSON or YAML)::

    {"schema_version": "reharness-patch-v1", "description": "...",
     "env": ENV | null,
     "hooks": {"before_action": "def hook(ctx, nb): ..."}, "metadata": {...}}

``ENV`` is any environment a kit provides (a built-in, an installed kit, ``gym:ID``), or a Harness-R1
benchmark name. Hook keys may use reharness's names (``on_init``, ``before_decision``, ``before_action``,
``after_feedback``) or Harness-R1's (``make_pre_hint``, ``on_before_action``, ``on_post_step``); a
:class:`Patch` keys its hooks by the canonical point, in lifecycle order. Harness-R1's ``harness-r1-patch-v1``
(REFERENCE.md §1) is imported and exported: at most 12 actions, only ``add_code_hook``, each hook at most
once, benchmark names mapped to environments (each kit's r1 adapter names its benchmark); in the ``r1``
dialect a repeated hook is kept as several code blocks of one hook (upstream runs them all, in order, each
compiled on its own). Unknown keys of that foreign format are kept under ``metadata["harness_r1"]`` rather
than rejected, so newer Harness-R1 files still import.

**Dialect** says which view the hooks are written against: ``reharness`` (reharness's ``ctx`` and effect
names) or ``r1`` (Harness-R1's official ``ctx``, namespace, validator and return-value rules; see
docs/r1-interop.md). A ``harness-r1-patch-v1`` document is ``r1`` unless it carries
``"reharness_dialect": "reharness"`` (what :meth:`Patch.to_harness_r1` writes for a reharness-dialect patch,
and what engineers' replies are parsed as); a ``reharness-patch-v1`` document is ``reharness`` unless it
says ``"dialect": "r1"``. In the ``r1`` dialect only Harness-R1's four hook names are accepted.

**Identity** is a content hash (:func:`~reharness.core.hashing.stable_hash`) of the schema version,
description, env and hooks — not of ``metadata``, which records provenance (engineer, packet, sampling)
without changing what the patch does. Code is hashed after normalising line endings to ``\\n`` and trailing
whitespace at its end (so the same patch in YAML block style and in JSON has one identity); all other
whitespace in code is significant. Whitespace in the description is collapsed before hashing, so re-wrapping
the prose keeps the identity, while any change of its words gives a new one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from reharness.core.errors import did_you_mean
from reharness.core.hashing import stable_hash
from reharness.envs.registry import BUILTIN_KITS, find_kit
from reharness.patches.documents import format_error, parse_json, parse_text, read_text
from reharness.patches.errors import PatchFormatError
from reharness.patches.sandbox.r1_dialect import BLOCK_SEPARATOR, split_blocks
from reharness.runtime.effects import HARNESS_R1_ALIASES, HOOK_POINTS, EffectError, canonical_hook_point
from reharness.runtime.r1.factory import r1_benchmark, r1_benchmarks

SCHEMA_VERSION = "reharness-patch-v1"
HARNESS_R1_SCHEMA = "harness-r1-patch-v1"
ENV_NAMES: tuple[str, ...] = tuple(BUILTIN_KITS)
MAX_R1_ACTIONS = 12
MAX_DESCRIPTION_CHARS = 4_000
MAX_METADATA_BYTES = 65_536
_R1_NAMES = {point: name for name, point in HARNESS_R1_ALIASES.items()}
_FIELDS = ("schema_version", "description", "env", "hooks", "metadata", "dialect")
DIALECTS: tuple[str, ...] = ("reharness", "r1")
#: Top-level key of a ``harness-r1-patch-v1`` document whose hooks use reharness's view (ignored upstream).
DIALECT_KEY = "reharness_dialect"


def _dialect(value: Any, source: str, field_name: str = "dialect") -> str:
    if value not in DIALECTS:
        fix = did_you_mean(str(value), list(DIALECTS))
        raise format_error(source, field_name, f"unknown dialect {value!r}", fix, "bad_field")
    return str(value)


def _code(value: Any, source: str, field_name: str) -> str:
    if not isinstance(value, str):
        fix = "give the hook's Python code as one string (def hook(ctx, nb): ...)"
        raise format_error(
            source, field_name, f"must be a string, got {type(value).__name__}", fix, "bad_field"
        )
    text = value.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    return text + "\n" if text else ""


def _hook_point(name: Any, source: str, field_name: str) -> str:
    try:
        return canonical_hook_point(str(name))
    except EffectError as exc:
        raise format_error(
            source, field_name, f"unknown hook {name!r}", exc.hint or "", "unknown_hook"
        ) from None


def _hooks(value: Any, source: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        fix = 'write "hooks": {"before_action": "def hook(ctx, nb): ..."}'
        raise format_error(
            source, "hooks", f"must be an object, got {type(value).__name__}", fix, "bad_field"
        )
    out: dict[str, str] = {}
    for key, code in value.items():
        point = _hook_point(key, source, f"hooks.{key}")
        if point in out:
            fix = f"{key!r} and another key both name the {point} hook; keep one"
            raise format_error(source, f"hooks.{key}", "duplicate hook", fix, "duplicate_hook")
        out[point] = _code(code, source, f"hooks.{key}")
    return {point: out[point] for point in HOOK_POINTS if point in out}


def _env(value: Any, source: str, field_name: str = "env") -> str | None:
    """The environment a patch names: a built-in or Harness-R1 benchmark name (any case), or any name a kit
    registry resolves as written (an installed kit, ``gym:ID``, ``module:attribute``)."""
    if value is None:
        return None
    if isinstance(value, str):
        lowered = value.lower()
        name = r1_benchmarks().get(lowered, lowered)
        if name in ENV_NAMES:
            return name
        kit = find_kit(value)
        if kit is not None:
            return kit.name
    known = list(ENV_NAMES) + list(r1_benchmarks())
    fix = did_you_mean(str(value), known) + "; or the name of an installed kit; or null for any environment"
    raise format_error(source, field_name, f"unknown environment {value!r}", fix, "unknown_env")


def _description(value: Any, source: str, field_name: str = "description") -> str:
    if not isinstance(value, str):
        fix = "describe the failure mode the patch addresses in one string"
        raise format_error(
            source, field_name, f"must be a string, got {type(value).__name__}", fix, "bad_field"
        )
    if len(value) > MAX_DESCRIPTION_CHARS:
        problem = f"is {len(value)} characters; the limit is {MAX_DESCRIPTION_CHARS}"
        raise format_error(source, field_name, problem, "shorten the description", "bad_field")
    return value


def _metadata(value: Any, source: str) -> dict[str, Any]:
    if value is None:
        return {}
    fix = "metadata must be a JSON object (string keys; strings, numbers, lists, objects)"
    if not isinstance(value, Mapping):
        raise format_error(
            source, "metadata", f"must be an object, got {type(value).__name__}", fix, "bad_field"
        )
    try:
        text = json.dumps(dict(value), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise format_error(source, "metadata", f"is not plain JSON data ({exc})", fix, "bad_field") from None
    if len(text.encode("utf-8")) > MAX_METADATA_BYTES:
        problem = f"is larger than {MAX_METADATA_BYTES} bytes"
        raise format_error(source, "metadata", problem, "keep metadata small", "bad_field")
    copy: dict[str, Any] = json.loads(text)  # detached from the caller's objects
    return copy


@dataclass(frozen=True, eq=False)
class Patch:
    """A validated-format overlay patch: hook code keyed by canonical hook point (lifecycle order).

    Equality compares identity and metadata; hashing uses the identity. Static safety rules are checked
    separately by :func:`reharness.patches.validate.validate_patch`.
    """

    hooks: dict[str, str]
    description: str = ""
    env: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    dialect: str = "reharness"

    def __post_init__(self) -> None:
        source = "Patch"
        object.__setattr__(self, "dialect", _dialect(self.dialect, source))
        object.__setattr__(self, "hooks", _hooks(self.hooks, source))
        object.__setattr__(self, "description", _description(self.description, source))
        object.__setattr__(self, "env", _env(self.env, source))
        object.__setattr__(self, "metadata", _metadata(self.metadata, source))

    # --- identity -----------------------------------------------------------------------------------------
    def content(self) -> dict[str, Any]:
        """The canonical content the identity hashes (everything but metadata; the dialect when ``r1``)."""
        content: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "description": " ".join(self.description.split()),
            "env": self.env,
            "hooks": dict(self.hooks),
        }
        if self.dialect != "reharness":
            content["dialect"] = self.dialect
        return content

    @cached_property
    def identity(self) -> str:
        """Content hash (16 hex characters); see the module docstring for what it covers."""
        return stable_hash(self.content())

    @property
    def points(self) -> tuple[str, ...]:
        return tuple(self.hooks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Patch):
            return NotImplemented
        return self.identity == other.identity and self.metadata == other.metadata

    def __hash__(self) -> int:
        return hash(self.identity)

    def __repr__(self) -> str:
        return (
            f"Patch(identity={self.identity!r}, env={self.env!r}, hooks={list(self.hooks)}, "
            f"dialect={self.dialect!r})"
        )

    def with_metadata(self, **entries: Any) -> Patch:
        """A copy with ``entries`` merged into ``metadata`` (the identity is unchanged)."""
        return Patch(dict(self.hooks), self.description, self.env, {**self.metadata, **entries}, self.dialect)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "description": self.description,
            "env": self.env,
            "hooks": dict(self.hooks),
            "metadata": json.loads(json.dumps(self.metadata)),
        }
        if self.dialect != "reharness":
            out["dialect"] = self.dialect
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + "\n"

    def to_yaml(self) -> str:
        return yaml.dump(self.to_dict(), Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=110)

    def dump(self, path: str | Path) -> Path:
        """Write the patch as YAML (``.yaml``/``.yml``) or JSON (anything else); return the path."""
        path = Path(path)
        text = self.to_yaml() if path.suffix.lower() in (".yaml", ".yml") else self.to_json()
        path.write_text(text, encoding="utf-8")
        return path

    # --- harness-r1-patch-v1 -----------------------------------------------------------------------------
    def to_harness_r1(self) -> dict[str, Any]:
        """Export as Harness-R1's ``harness-r1-patch-v1`` (needs ``env``: the format names a benchmark; an
        env without a Harness-R1 benchmark is named as itself and reads back as
        itself)."""
        if self.env is None:
            fix = f"set env to one of {', '.join(ENV_NAMES)} before exporting"
            raise format_error("Patch", "env", "Harness-R1 patches name a benchmark", fix, "bad_field")
        benchmark = r1_benchmark(self.env)
        actions = [
            {"type": "add_code_hook", "hook": _R1_NAMES[p], "code": block}
            for p, c in self.hooks.items()
            for block in (split_blocks(c) if self.dialect == "r1" else [c])
        ]
        out: dict[str, Any] = {
            "schema_version": HARNESS_R1_SCHEMA,
            "benchmark": benchmark,
            "description": self.description,
            "actions": actions,
        }
        if self.dialect != "r1":  # the hooks read reharness's ctx: say so (Harness-R1 ignores the key)
            out[DIALECT_KEY] = self.dialect
        return out

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<patch>", dialect: str | None = None) -> Patch:
        """Build from a parsed document of either schema (detected by ``schema_version``).

        ``dialect`` overrides the document's own (see the module docstring); ``None`` keeps it.
        """
        if not isinstance(data, Mapping):
            fix = f'write an object with "schema_version": "{SCHEMA_VERSION}"'
            kind = {str: "a plain string", list: "a list", type(None): "empty"}.get(
                type(data), type(data).__name__
            )
            problem = f"a patch is an object (a mapping of fields), but this document is {kind}"
            raise format_error(source, None, problem, fix, "wrong_schema")
        schema = data.get("schema_version")
        if schema == HARNESS_R1_SCHEMA:
            chosen = dialect or _dialect(data.get(DIALECT_KEY, "r1"), source, DIALECT_KEY)
            return _from_harness_r1(data, source, chosen)
        if schema != SCHEMA_VERSION:
            problem = "missing schema_version" if schema is None else f"unknown schema_version {schema!r}"
            fix = did_you_mean(str(schema), [SCHEMA_VERSION, HARNESS_R1_SCHEMA])
            raise format_error(source, "schema_version", problem, fix, "wrong_schema")
        unknown = [k for k in data if k not in _FIELDS]
        if unknown:
            fix = did_you_mean(str(unknown[0]), list(_FIELDS))
            raise format_error(source, str(unknown[0]), "unknown field", fix, "unknown_field")
        if "hooks" not in data:
            fix = 'add "hooks": {"<hook point>": "def hook(ctx, nb): ..."}'
            raise format_error(source, "hooks", "missing", fix, "missing_field")
        chosen = dialect or _dialect(data.get("dialect", "reharness"), source)
        hooks = _hooks(data["hooks"], source)
        if chosen == "r1":
            for key in data["hooks"]:
                _r1_hook_name(key, source, f"hooks.{key}")
        return cls(
            hooks,
            _description(data.get("description", ""), source),
            _env(data.get("env"), source),
            _metadata(data.get("metadata"), source),
            chosen,
        )


def _r1_hook_name(name: Any, source: str, field_name: str) -> None:
    """The ``r1`` dialect takes Harness-R1's hook names only (its validator rejects any other)."""
    if name not in HARNESS_R1_ALIASES:
        fix = f"use one of Harness-R1's hook names: {', '.join(HARNESS_R1_ALIASES)}"
        raise format_error(source, field_name, f"unknown Harness-R1 hook {name!r}", fix, "unknown_hook")


def _from_harness_r1(data: Mapping[str, Any], source: str, dialect: str) -> Patch:
    actions = data.get("actions")
    if not isinstance(actions, list):
        fix = 'add "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": "..."}]'
        problem = "missing" if actions is None else f"must be a list, got {type(actions).__name__}"
        raise format_error(
            source, "actions", problem, fix, "missing_field" if actions is None else "bad_field"
        )
    if len(actions) > MAX_R1_ACTIONS:
        fix = "merge the code of one hook into one action"
        problem = f"{len(actions)} actions; Harness-R1 allows at most {MAX_R1_ACTIONS}"
        raise format_error(source, "actions", problem, fix, "too_many_actions")
    hooks: dict[str, str] = {}
    action_extra: list[dict[str, Any]] = []
    for i, action in enumerate(actions):
        where = f"actions[{i}]"
        if not isinstance(action, Mapping):
            fix = 'each action is {"type": "add_code_hook", "hook": ..., "code": ...}'
            raise format_error(source, where, "must be an object", fix, "bad_field")
        if action.get("type") != "add_code_hook":
            fix = "only add_code_hook is enabled (Harness-R1 turned typed rules off); write the rule as code"
            raise format_error(
                source,
                f"{where}.type",
                f"unsupported action {action.get('type')!r}",
                fix,
                "unsupported_action",
            )
        if dialect == "r1":
            _r1_hook_name(action.get("hook"), source, f"{where}.hook")
        point = _hook_point(action.get("hook"), source, f"{where}.hook")
        if point in hooks and dialect == "r1":  # upstream runs every block of a repeated hook, in order
            hooks[point] += BLOCK_SEPARATOR.lstrip("\n") + _code(action.get("code"), source, f"{where}.code")
            continue
        if point in hooks:
            fix = "each hook may appear once; merge the two code blocks into one hook"
            raise format_error(
                source, f"{where}.hook", f"hook {action.get('hook')!r} repeated", fix, "duplicate_hook"
            )
        hooks[point] = _code(action.get("code"), source, f"{where}.code")
        extra = {k: v for k, v in action.items() if k not in ("type", "hook", "code")}
        if extra:
            action_extra.append({"index": i, **extra})
    metadata: dict[str, Any] = {"imported_from": HARNESS_R1_SCHEMA}
    known = ("schema_version", "benchmark", "description", "actions", DIALECT_KEY)
    extra_top = {k: v for k, v in data.items() if k not in known}
    if extra_top or action_extra:
        metadata["harness_r1"] = {"extra": extra_top, "action_extra": action_extra}
    if dialect == "r1" and not actions:
        fix = 'add at least one {"type": "add_code_hook", ...} action'
        raise format_error(source, "actions", "Harness-R1 needs a non-empty list", fix, "empty_patch")
    env = _env(data.get("benchmark"), source, "benchmark")
    if dialect == "r1" and env is None:
        fix = (
            f"set benchmark to one of {', '.join(r1_benchmarks())} (Harness-R1 compiles hooks per benchmark)"
        )
        raise format_error(source, "benchmark", "missing", fix, "missing_field")
    return Patch(
        hooks,
        _description(data.get("description", ""), source),
        env,
        _metadata(metadata, source),
        dialect,
    )


class _BlockDumper(yaml.SafeDumper):
    """YAML with multi-line strings (hook code) in literal block style."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_representer)


def patch_from_text(text: str, *, source: str = "<string>", dialect: str | None = None) -> Patch:
    """Parse a patch document (JSON when it starts with ``{``, else YAML) of either schema."""
    return Patch.from_dict(parse_text(text, source), source=source, dialect=dialect)


def load_patch(path: str | Path, *, dialect: str | None = None) -> Patch:
    """Load a patch file of either schema, JSON or YAML (detected from the content, not the suffix).

    ``dialect`` (``reharness`` or ``r1``) overrides the document's own, like ``--dialect`` on the CLI.
    A ``.json`` file that is no patch object in either syntax gets the JSON parser's error (line and
    column), since JSON is what its author meant to write; an empty file is refused as such."""
    source = str(path)
    if dialect is not None:
        _dialect(dialect, source, "--dialect")
    text = read_text(path)
    if not text.strip():
        fix = f'write an object with "schema_version": "{SCHEMA_VERSION}" and hooks'
        raise format_error(source, None, "the file is empty", fix, "empty_document")
    meant_json = Path(path).suffix.lower() == ".json"
    try:
        data = parse_text(text, source)
    except PatchFormatError:
        if meant_json:
            parse_json(text, source)  # raises the JSON error
        raise
    if meant_json and not isinstance(data, Mapping):
        parse_json(text, source)  # raises when the text is not JSON at all (YAML read it as a string)
    return Patch.from_dict(data, source=source, dialect=dialect)
