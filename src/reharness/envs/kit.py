"""The environment kit: everything reharness knows about one environment, in one place.

A kit is the unit of extension (the way gymnasium registers environments and pytest finds plugins): the
built-in environments are kits, the real-benchmark kits are kits, and a user's environment is a kit, found
in one of three ways (:mod:`reharness.envs.registry`): a built-in name, an installed distribution's entry
point in the group ``reharness.kits``, or ``--env module.path:attribute`` naming a kit object or a function
that returns one. ``--env gym:ID`` builds a kit with nothing but the generic behaviour around any gymnasium
text environment (:mod:`reharness.envs.gym_adapter`).

Only :attr:`EnvKit.name` and :attr:`EnvKit.env` are required. Every other field is optional; the layers that
read it fall back to the generic behaviour when a kit leaves it out:

- ``harnesses``: the harness YAMLs by name; the first is the base harness (the one a run uses without
  ``--harness``). Paths, or ``"package:relative/path.yaml"`` for a file inside an installed package.
- ``detectors``: functions ``record -> iterable of Finding-like objects`` (``code``, ``steps``, ``detail``)
  that add environment-specific failure codes to the generic ones (:mod:`reharness.failures.detectors`).
- ``signals``: a function ``record -> dict`` of environment-specific runtime signals for packets.
- ``operators``: repair operators (:class:`reharness.engineer.operators.Operator`), each naming the
  ``direction`` it repairs along; they join the generic operators for this environment.
- ``generic_operators``: the names of the generic operators and config knobs that apply (None: all of
  them; ``()``: none, for an environment whose ``ctx`` they cannot read);
- ``operator_settings``: ``operator name -> settings`` that tune a generic operator to this environment
  (loop breaker ``advice`` and ``modes``, snap ``cutoffs`` and ``skip_prefix``, goal reminder ``progress``
  paths, format reminder ``message`` and ``count_invalid``, step warning ``advice``);
- ``ctx_fields``: the fields hooks see in ``ctx`` beyond the generic ones, ``name -> type``
  (``int``/``bool``/``str``); repair programs may condition on them (``state.x`` for a nested field).
- ``action_key``: a function ``action -> key``: two actions with the same key are "the same action" for the
  repeated-action detector and signals (db: the SQL statement, not the reasoning around it).
- ``mask_rules``: what failure packets hide (:class:`reharness.failures.text.MaskRule`: answers, ids).
- ``leakage``: a function ``text -> iterable of (kind, value)`` naming task-specific facts a patch must not
  copy (kinds ``product_ids``, ``object_instances``).
- ``data_loader``: a function ``(path, env_options) -> env keyword arguments`` for ``--data`` (real task
  files); without one, ``--data`` is refused for the kit.
- ``invalid_is_format``: the environment's only invalid actions are replies outside its text format (db's
  SQL protocol): ``invalid_action`` steps count as ``format_error``.
- ``r1_adapter``: the class (a :class:`reharness.runtime.r1.adapter.R1Adapter`) that builds Harness-R1's
  official ``ctx`` for this environment; it names the benchmark (``alfworld``) and its conventions.
- ``tiny``: the tiny-agent recipe (:class:`reharness.models.tiny.spec.TinySpec`: recipes by size and the
  rules of the solver demonstrations they are trained on).
- ``reuse_envs``: the environment is expensive to start (a JVM, a server) and an instance may play any
  number of episodes, each from its own ``reset``: idle instances are kept between batches of the same
  options instead of being closed (:mod:`reharness.runtime.env_reuse`).

The environment (``env``) is a class or factory called with ``split``, ``max_steps`` and the harness's
``env_options`` and returning a :class:`reharness.envs.base.TextEnv` (or any object with the same methods,
see :class:`TextEnvLike`); a string ``"module:attribute"`` is imported on first use, so listing kits stays
cheap. Kits are plain frozen data: validation happens in :meth:`EnvKit.check`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from reharness.core.env_protocol import TextEnvLike, run_metrics_of
from reharness.core.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.:/-]*$")
_CTX_TYPES = frozenset({"int", "bool", "str"})


Detector = Callable[[Any], Iterable[Any]]


@dataclass(frozen=True)
class EnvKit:
    """Everything reharness knows about one environment (see the module docstring for each field)."""

    name: str
    env: Callable[..., Any] | str
    summary: str = ""
    gym_id: str | None = None
    harnesses: Mapping[str, str | Path] = field(default_factory=dict)
    detectors: Sequence[Detector] = ()
    signals: Callable[[Any], Mapping[str, Any]] | None = None
    operators: Sequence[Any] = ()
    generic_operators: Sequence[str] | None = None
    operator_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    ctx_fields: Mapping[str, str] = field(default_factory=dict)
    action_key: Callable[[str], str] | None = None
    mask_rules: Sequence[Any] = ()
    leakage: Callable[[str], Iterable[tuple[str, str]]] | None = None
    data_loader: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
    invalid_is_format: bool = False
    r1_adapter: Callable[..., Any] | None = None
    tiny: Any = None
    reuse_envs: bool = False
    #: Where the kit came from (``built-in``, ``entry point NAME (DIST)``, ``--env module:attr``, ``gym``);
    #: set by the registry.
    source: str = "user"

    # ------------------------------------------------------------------ construction helpers
    def with_source(self, source: str) -> EnvKit:
        return replace(self, source=source)

    def env_factory(self) -> Callable[..., Any]:
        """The environment class or factory (imported on first use when given as ``module:attribute``)."""
        if callable(self.env):
            return self.env
        return import_object(self.env, f"kit {self.name!r}: env")

    def make(self, **kwargs: Any) -> TextEnvLike:
        """A fresh environment of this kit (unwrapped)."""
        env = self.env_factory()(**kwargs)
        return getattr(env, "unwrapped", env)

    def run_metrics(self, results: Sequence[tuple[str, bool]]) -> dict[str, Any]:
        """Environment-specific metrics of a run from its ``(task_id, success)`` pairs (the env class's
        ``run_metrics``, e.g. task and scenario goal completion); none when the environment defines none."""
        return run_metrics_of(self.env_factory(), results)

    def harness_text(self, name: str | None = None) -> str | None:
        """The YAML text of harness ``name`` (default: the base harness), or None when the kit ships none."""
        if not self.harnesses:
            return None
        key = name or next(iter(self.harnesses))
        if key not in self.harnesses:
            raise ConfigError(
                f"kit {self.name!r} has no harness {key!r}",
                hint=f"use one of: {', '.join(self.harnesses)}",
            )
        return read_resource(self.harnesses[key], f"kit {self.name!r} harness {key!r}")

    # ------------------------------------------------------------------ validation
    def check(self, directions: Iterable[str] | None = None) -> list[str]:
        """Problems of this kit, each a sentence that names the field and the fix (empty: the kit is fine).

        ``directions``: the known repair directions; an operator naming another one is a problem."""
        problems: list[str] = []
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            problems.append(
                f"name {self.name!r} is not a valid environment name: start with a letter, then letters, "
                "digits, '_', '-', '.', ':' or '/'"
            )
        if not (callable(self.env) or (isinstance(self.env, str) and ":" in self.env)):
            problems.append("env must be an environment class, a factory, or a 'module:attribute' string")
        for key, kind in self.ctx_fields.items():
            if kind not in _CTX_TYPES:
                problems.append(f"ctx_fields[{key!r}] is {kind!r}; use one of {sorted(_CTX_TYPES)}")
        for i, detector in enumerate(self.detectors):
            if not callable(detector):
                problems.append(f"detectors[{i}] is not callable (a function record -> findings)")
        for key in ("signals", "action_key", "leakage", "data_loader", "r1_adapter"):
            value = getattr(self, key)
            if value is not None and not callable(value):
                problems.append(f"{key} must be a function or None")
        known = set(directions) if directions is not None else None
        for op in self.operators:
            name = getattr(op, "name", None)
            if not name or not hasattr(op, "fragments"):
                problems.append(
                    f"operators: {op!r} is not a repair operator (see engineer.operators.Operator)"
                )
                continue
            direction = getattr(op, "direction", None)
            if known is not None and direction is not None and direction not in known:
                problems.append(
                    f"operator {name!r} names unknown direction {direction!r}; "
                    f"use one of {', '.join(sorted(known))}"
                )
        return problems


def import_object(target: str, what: str) -> Any:
    """``module.path:attribute`` imported, with errors that say which part failed and how to fix it."""
    module_name, colon, attr = target.partition(":")
    if not colon or not module_name or not attr:
        raise ConfigError(f"{what}: {target!r} is not 'module.path:attribute'", hint="e.g. mypkg.kit:KIT")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{what}: cannot import module {module_name!r} ({exc})",
            hint=f"install the package that provides {module_name!r}, or put it on PYTHONPATH",
        ) from None
    except Exception as exc:  # a kit's own import error: say where it came from
        raise ConfigError(
            f"{what}: importing {module_name!r} failed: {type(exc).__name__}: {exc}",
            hint=f"fix the error in {module_name!r} (run `python -c 'import {module_name}'` to see it)",
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(
                f"{what}: module {module_name!r} has no attribute {attr!r}",
                hint=f"check the name after ':' in {target!r}",
            )
        obj = getattr(obj, part)
    return obj


def read_resource(location: str | Path, what: str) -> str:
    """Text of a file given as a path or as ``"package:relative/path"`` inside an installed package."""
    if isinstance(location, str) and ":" in location and not Path(location).exists():
        package, _, rel = location.partition(":")
        try:
            resource = resources.files(package).joinpath(rel)
        except ModuleNotFoundError:
            raise ConfigError(
                f"{what}: no package {package!r}", hint="check the 'package:path' form"
            ) from None
        if not resource.is_file():
            raise ConfigError(f"{what}: {location!r} is not a file in package {package!r}", hint="check it")
        return resource.read_text(encoding="utf-8")
    path = Path(location)
    if not path.is_file():
        raise ConfigError(f"{what}: {str(path)!r} does not exist", hint="pass an existing YAML file")
    return path.read_text(encoding="utf-8")
