"""Harness = base runtime configuration + ordered overlays.

A harness variant is configuration (:class:`HarnessConfig`, loadable from YAML: prompt templates, history
window, protocol, step limit) plus overlays. Each environment's kit ships its base harness (``harnesses``,
:mod:`reharness.envs.kit`). A harness is identified by its name and a content hash over the resolved
config and the overlays' identities, so trajectories record exactly what produced them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reharness.core.errors import ConfigError
from reharness.core.hashing import stable_hash
from reharness.core.types import SamplingParams
from reharness.runtime.overlay import Overlay

Protocol = Literal["text", "raw", "tools"]


class HarnessConfig(BaseModel):
    """The configurable part of a harness. Every field has a default from the env's base harness."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("base", description="Human-readable harness name.")
    env: str | None = Field(None, description="Environment this harness is for (short name); None = any.")
    protocol: Protocol = Field(
        "text",
        description="How model output becomes an action: 'text' (an 'Action: …' line), 'raw' (the whole "
        "output is the env action, e.g. DBBench v0.2), 'tools' (OpenAI-style tool calls).",
    )
    system_prompt: str = Field("", description="System prompt; {tool_names} and {max_steps} are filled in.")
    first_user_template: str = Field("{observation}", description="First user message; gets {observation}.")
    feedback_template: str = Field("Observation: {observation}", description="User message after each step.")
    show_admissible: bool = Field(False, description="Append the admissible actions to each observation.")
    admissible_template: str = Field(
        "Admissible actions: {actions}", description="How admissible actions show."
    )
    format_error_message: str = Field(
        "Your reply had no valid action. Reply with 'Action: <command>'.",
        description="Feedback when the output cannot be parsed into an action.",
    )
    history_window: int = Field(0, ge=0, description="Number of past turns kept in context (0 = all).")
    step_limit: int | None = Field(
        None, gt=0, description="Maximum decisions per episode (None = env default)."
    )
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    env_options: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for the environment (e.g. protocol: fc)."
    )

    @field_validator("system_prompt", "first_user_template", "feedback_template")
    @classmethod
    def _known_fields(cls, value: str) -> str:
        import string

        allowed = {"observation", "tool_names", "max_steps", "instruction"}
        for _, field_name, _, _ in string.Formatter().parse(value):
            if field_name is not None and field_name not in allowed:
                raise ValueError(
                    f"unknown template field {{{field_name}}}; allowed: {sorted(allowed)} "
                    "(write literal braces as {{ and }})"
                )
        return value


def _format_validation_error(source: str, exc: ValidationError) -> ConfigError:
    lines = [f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()]
    return ConfigError(
        f"invalid harness config in {source}:\n  " + "\n  ".join(lines),
        hint="see `reharness run --help` and the base harnesses in reharness/kits/*/harness.yaml",
    )


def base_harness_config(env_name: str, harness: str | None = None) -> HarnessConfig:
    """The base harness an environment's kit ships (``harness``: another of the kit's harnesses, by name);
    a kit that ships none gets the default configuration."""
    from reharness.envs.registry import get_kit

    kit = get_kit(env_name)
    text = kit.harness_text(harness)
    if text is None:
        return HarnessConfig(env=kit.name)
    data = yaml.safe_load(text) or {}
    if harness is not None and harness != next(iter(kit.harnesses)):
        data = base_harness_config(env_name).model_dump() | data
    try:
        return HarnessConfig.model_validate(data)
    except ValidationError as exc:
        raise _format_validation_error(f"kit {kit.name!r} harness {harness or 'base'!r}", exc) from exc


def load_harness_config(path: str | Path, env_name: str | None = None) -> HarnessConfig:
    """Load a harness YAML; fields it omits come from the env's base harness."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"harness file {str(path)!r} is a directory", hint="pass a harness YAML file")
    if not path.is_file():
        raise ConfigError(f"harness file {str(path)!r} does not exist", hint="pass an existing YAML file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"harness file {path} is not UTF-8 text (byte {exc.start} cannot be decoded)",
            hint="pass a harness YAML file saved as UTF-8",
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}", hint="fix the YAML syntax") from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} must hold a mapping of harness fields, got {type(data).__name__}",
            hint="write YAML fields such as 'step_limit: 30' (see src/reharness/kits/*/harness.yaml)",
        )
    target = data.get("env") or env_name
    if env_name and data.get("env") and data["env"] != env_name:
        raise ConfigError(
            f"{path} is a harness for env {data['env']!r} but the run is for {env_name!r}",
            hint="remove the 'env' field or use the matching environment",
        )
    base = base_harness_config(target).model_dump() if target else {}
    try:
        return HarnessConfig.model_validate(base | data)
    except ValidationError as exc:
        raise _format_validation_error(str(path), exc) from exc


def start_harness_config(path: str | Path | None, env_name: str) -> HarnessConfig:
    """The harness a run, an ``improve`` loop or a pool starts from (``--harness``): the YAML at ``path``
    over ``env_name``'s base harness, or that base itself when no file is given."""
    return load_harness_config(path, env_name) if path else base_harness_config(env_name)


class Harness:
    """A base runtime configuration plus ordered overlays."""

    def __init__(self, config: HarnessConfig, overlays: Sequence[Overlay] = ()) -> None:
        self.config = config
        self.overlays: tuple[Overlay, ...] = tuple(overlays)

    @property
    def name(self) -> str:
        if not self.overlays:
            return self.config.name
        return self.config.name + "+" + "+".join(o.name for o in self.overlays)

    @property
    def identity(self) -> str:
        return stable_hash(
            {"config": self.config.model_dump(mode="json"), "overlays": [o.identity for o in self.overlays]}
        )

    def with_overlays(self, *overlays: Overlay) -> Harness:
        return Harness(self.config, self.overlays + tuple(overlays))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": self.identity,
            "config": self.config.model_dump(mode="json"),
            "overlays": [
                {"name": o.name, "id": o.identity, "points": sorted(o.points)} for o in self.overlays
            ],
        }

    @classmethod
    def base(cls, env_name: str) -> Harness:
        return cls(base_harness_config(env_name))
