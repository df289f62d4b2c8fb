"""Repair directions: the axes along which sibling harnesses are evolved (Harness-S "directional evolution").

A direction is data: its name, the sentence an engineer is given, the failure codes that form its cluster,
the repair operators that belong to it, and the harness-config fields a sibling along it may change. The
built-in set ships as ``directions.yaml`` beside this module; ``--directions FILE`` adds a user's (same
format), and ``--directions a,b`` picks by name. The operators' direction tags are derived from this one
table (:func:`directions_of`), so there is a single source.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reharness.core.errors import ConfigError, UnknownNameError, did_you_mean
from reharness.failures.codes import ALL_CODES

DIRECTIONS_FORMAT = "reharness-directions-v1"
_CODES = frozenset(code.value for code in ALL_CODES)


def _config_fields() -> frozenset[str]:
    from reharness.runtime.harness import HarnessConfig

    return frozenset(HarnessConfig.model_fields) - {"name", "env"}


class Direction(BaseModel):
    """One repair direction (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Stable identifier, e.g. loop_recovery.")
    description: str = Field(min_length=1, description="The sentence an engineer is given.")
    codes: tuple[str, ...] = Field(min_length=1, description="Failure codes of the direction's cluster.")
    operators: tuple[str, ...] = Field(default=(), description="Repair operators along this direction.")
    config_fields: tuple[str, ...] = Field(default=(), description="Harness-config fields it may change.")

    @field_validator("codes")
    @classmethod
    def _known_codes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in _CODES]
        if unknown:
            raise ValueError(f"unknown failure code(s) {unknown}; known: {sorted(_CODES)}")
        return value

    @field_validator("operators")
    @classmethod
    def _known_operators(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from reharness.engineer.operators.registry import shipped_operators

        known = {op.name for op in shipped_operators()}
        unknown = [o for o in value if o not in known]
        if unknown:
            raise ValueError(f"unknown operator(s) {unknown}; known: {sorted(known)}")
        return value

    @field_validator("config_fields")
    @classmethod
    def _known_fields(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        known = _config_fields()
        unknown = [f for f in value if f not in known]
        if unknown:
            raise ValueError(f"unknown harness config field(s) {unknown}; known: {sorted(known)}")
        return value

    def covers(self, codes: Sequence[str]) -> bool:
        """Whether a failure with these codes falls in this direction's cluster."""
        return any(code in self.codes for code in codes)


class DirectionSet(BaseModel):
    """A directions file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["reharness-directions-v1"] = "reharness-directions-v1"
    directions: tuple[Direction, ...] = Field(min_length=1)


def _parse(text: str, source: str) -> tuple[Direction, ...]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source} is not valid YAML: {exc}", hint="fix the YAML syntax") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source} must hold a mapping with 'format' and 'directions', got {type(data).__name__}",
            hint=f"start the file with 'format: {DIRECTIONS_FORMAT}' and a 'directions:' list",
        )
    try:
        parsed = DirectionSet.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(
            f"invalid directions file {source}: {problems}",
            hint="each direction needs name, description and codes; see reharness/pool/directions.yaml",
        ) from None
    names = [d.name for d in parsed.directions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{source} names direction(s) {twice} more than once", hint="give each a new name")
    return parsed.directions


def builtin_directions() -> tuple[Direction, ...]:
    """The directions shipped with reharness."""
    resource = resources.files("reharness.pool").joinpath("directions.yaml")
    return _parse(resource.read_text(encoding="utf-8"), "reharness/pool/directions.yaml")


def load_directions(spec: str | Path | None = None) -> tuple[Direction, ...]:
    """Resolve ``--directions``: ``None`` or empty (every built-in direction), a path to a directions YAML
    file (its directions are added to the built-in ones; it may not redefine one), or a comma-separated list
    of direction names."""
    builtin = builtin_directions()
    if spec is None or str(spec).strip() == "":
        return builtin
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        if path.is_dir():
            raise ConfigError(f"--directions {path} is a directory", hint="pass a directions YAML file")
        if not path.is_file():
            raise ConfigError(f"directions file {str(path)!r} does not exist", hint="pass an existing file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{path} is not a text file", hint="pass a directions YAML file") from None
        extra = _parse(text, str(path))
        clash = sorted({d.name for d in extra} & {d.name for d in builtin})
        if clash:
            raise ConfigError(
                f"{path} redefines built-in direction(s) {clash}",
                hint="give your directions new names (built-in ones cannot be replaced)",
            )
        return builtin + extra
    return select_directions(builtin, [n.strip() for n in str(spec).split(",") if n.strip()])


def select_directions(directions: Sequence[Direction], names: Sequence[str]) -> tuple[Direction, ...]:
    """The directions called ``names``, in the given order."""
    by_name = {d.name: d for d in directions}
    if not names:
        raise ConfigError("no direction named", hint=f"name some of: {', '.join(by_name)}")
    chosen = []
    for name in names:
        if name not in by_name:
            raise UnknownNameError(f"unknown direction {name!r}", hint=did_you_mean(name, list(by_name)))
        chosen.append(by_name[name])
    return tuple(chosen)


def directions_of(operator: str, directions: Sequence[Direction] | None = None) -> tuple[str, ...]:
    """The names of the directions an operator belongs to (its direction tags)."""
    return tuple(d.name for d in (directions or builtin_directions()) if operator in d.operators)


def cluster_of(codes: Sequence[str], directions: Sequence[Direction]) -> tuple[str, ...]:
    """The directions whose cluster a failure with ``codes`` falls in."""
    return tuple(d.name for d in directions if d.covers(codes))
