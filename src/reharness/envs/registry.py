"""The kit registry: every command's ``--env NAME`` resolves here, the same way, to one :class:`EnvKit`.

Where a kit comes from, in the order a name is tried:

1. **built-ins** (:data:`BUILTIN_KITS`, the one place outside a kit that names the built-in environments),
   each a ``module:attribute`` string loaded on first use;
2. kits registered in this process (:func:`register_kit`, or :func:`register_env` with an :class:`EnvSpec`);
3. **installed distributions** that declare the entry-point group ``reharness.kits`` (the entry point's
   name is the environment name; its object is a kit or a function returning one);
4. ``gym:ID``: any gymnasium environment with text spaces, wrapped with the generic behaviour
   (:mod:`reharness.envs.gym_adapter`);
5. ``module.path:attribute``: a kit object or a function returning one, imported now.

A name is also accepted as a registered kit's gymnasium id (``reharness/Household-v0``). Built-in kits are
registered with gymnasium too (an id and an entry-point string each, so ``gymnasium.make`` works and the
env's module loads only when one is built). Every failure is a :class:`~reharness.core.errors.ConfigError`
or :class:`~reharness.core.errors.UnknownNameError` that names the kit and the fix.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import gymnasium

from reharness.core.env_protocol import TextEnvLike
from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.registry import Registry
from reharness.envs.kit import EnvKit, import_object

ENTRY_POINT_GROUP = "reharness.kits"
GYM_PREFIX = "gym:"

#: The built-in kits: name -> (kit object, gymnasium id, environment class), as ``module:attribute`` strings
#: so that registering them with gymnasium imports nothing. Each kit's other knowledge lives in its kit.
BUILTIN_KITS: dict[str, tuple[str, str, str]] = {
    "household": (
        "reharness.kits.household.kit:KIT",
        "reharness/Household-v0",
        "reharness.kits.household.env:HouseholdEnv",
    ),
    "shop": ("reharness.kits.shop.kit:KIT", "reharness/Shop-v0", "reharness.kits.shop.env:ShopEnv"),
    "db": ("reharness.kits.db.kit:KIT", "reharness/DB-v0", "reharness.kits.db.env:DBEnv"),
    "code": ("reharness.kits.code.kit:KIT", "reharness/Code-v0", "reharness.kits.code.env:CodeEnv"),
    "apps": ("reharness.kits.apps.kit:KIT", "reharness/Apps-v0", "reharness.kits.apps.env:AppsEnv"),
}
#: What ``reharness demo`` improves: the built-in kit and its shipped tiny agent.
DEMO_ENV = "household"
DEMO_AGENT = "tiny:household-S"


@dataclass(frozen=True)
class EnvSpec:
    """A plain environment registration (the pre-kit API, kept): a kit with only an env and a gymnasium id."""

    name: str
    gym_id: str
    entry_point: str
    summary: str


#: Back-compatible view of the built-ins as :class:`EnvSpec` (the summaries live in the kits).
BUILTIN_ENVS: dict[str, EnvSpec] = {
    name: EnvSpec(name, gym_id, entry, "") for name, (_, gym_id, entry) in BUILTIN_KITS.items()
}

#: The kits registered in this process (a re-registration replaces); the built-ins and the entry points are
#: found lazily (:func:`_find`), so an unknown name's error lists those too.
_REGISTERED: Registry[EnvKit] = Registry("environment")
#: Caches of :func:`get_kit` / :func:`find_kit`: resolved names, and names that resolve to nothing.
_LOADED: dict[str, EnvKit] = {}
_MISSING: set[str] = set()
#: How to name an environment that no registry lists (the unknown-environment hint).
_OTHER_WAYS = "or pass a kit as --env module.path:attribute, or a gymnasium text env as --env gym:ID"


# ---------------------------------------------------------------------------------------------- registration
def register_kit(kit: EnvKit, source: str = "register_kit") -> EnvKit:
    """Make ``kit`` addressable by name in this process (and by its gymnasium id, when it has one)."""
    kit = _checked(kit if kit.source != "user" else kit.with_source(source), kit.name)
    _REGISTERED.add(kit.name, kit, replace=True)
    _LOADED.pop(kit.name, None)
    _MISSING.discard(kit.name)
    if kit.gym_id and kit.gym_id not in gymnasium.registry:
        gymnasium.register(id=kit.gym_id, entry_point=kit.env, disable_env_checker=True)
    return kit


def register_env(spec: EnvSpec) -> None:
    """Register a plain environment (no kit knowledge: the generic detectors, operators and ``ctx`` apply)."""
    register_kit(
        EnvKit(name=spec.name, env=spec.entry_point, summary=spec.summary, gym_id=spec.gym_id),
        source="register_env",
    )


def register_envs() -> None:
    """Register every built-in with gymnasium (idempotent)."""
    for spec in BUILTIN_ENVS.values():
        if spec.gym_id not in gymnasium.registry:
            gymnasium.register(id=spec.gym_id, entry_point=spec.entry_point, disable_env_checker=True)


# ---------------------------------------------------------------------------------------------- lookup
def entry_point_kits() -> dict[str, metadata.EntryPoint]:
    """The installed distributions' kits (group ``reharness.kits``), by environment name."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def get_kit(name: str) -> EnvKit:
    """The kit that ``--env name`` names (see the module docstring for the order); clear error otherwise."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("the environment name is empty", hint="pass --env NAME, e.g. --env household")
    name = name.strip()
    if name in _LOADED:
        return _LOADED[name]
    kit = _find(name)
    _LOADED[name] = kit
    _LOADED.setdefault(kit.name, kit)
    _MISSING.discard(kit.name)
    return kit


def find_kit(name: str) -> EnvKit | None:
    """:func:`get_kit`, or ``None`` when ``name`` names no kit (records of a kit that is not installed here:
    readers fall back to the generic behaviour)."""
    if name in _MISSING:
        return None
    try:
        return get_kit(name)
    except (UnknownNameError, ConfigError):
        _MISSING.add(name)  # readers ask once per step or record: resolve (and scan entry points) once
        return None


def _find(name: str) -> EnvKit:
    if name in BUILTIN_KITS:
        return _load_builtin(name)
    if name in _REGISTERED:
        return _REGISTERED.get(name)
    for builtin, (_, gym_id, _) in BUILTIN_KITS.items():
        if name == gym_id:
            return get_kit(builtin)
    for kit in _REGISTERED.entries():
        if kit.gym_id == name:
            return kit
    points = entry_point_kits()
    if name in points:
        return _from_entry_point(points[name])
    if name.startswith(GYM_PREFIX):
        from reharness.envs.gym_adapter import gym_kit

        return gym_kit(name[len(GYM_PREFIX) :])
    if ":" in name:
        kit = _from_object(import_object(name, f"--env {name}"), name, f"--env {name}")
        if kit.name not in _REGISTERED:
            _REGISTERED.add(kit.name, kit)
        return kit
    raise _REGISTERED.unknown(name, known=[*BUILTIN_KITS, *_REGISTERED, *points], hint=_OTHER_WAYS)


def _load_builtin(name: str) -> EnvKit:
    location = BUILTIN_KITS[name][0]
    return _from_object(import_object(location, f"built-in kit {name!r}"), location, "built-in")


def _from_entry_point(point: metadata.EntryPoint) -> EnvKit:
    dist = getattr(point.dist, "name", None) or "?"
    source = f"entry point {point.name} ({dist})"
    try:
        obj = point.load()
    except Exception as exc:
        raise ConfigError(
            f"kit {point.name!r} from {source} failed to load: {type(exc).__name__}: {exc}",
            hint=f"fix or reinstall the distribution {dist!r} (its entry point is {point.value!r})",
        ) from None
    kit = _from_object(obj, point.value, source)
    if kit.name != point.name:
        raise ConfigError(
            f"entry point {point.name!r} of {dist!r} gives a kit named {kit.name!r}",
            hint="name the entry point as the kit (the name users pass to --env)",
        )
    return kit


def _from_object(obj: Any, where: str, source: str) -> EnvKit:
    if not isinstance(obj, EnvKit) and callable(obj) and not isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise ConfigError(
                f"kit factory {where!r} raised {type(exc).__name__}: {exc}",
                hint="fix the factory; it must return a reharness.envs.EnvKit",
            ) from None
    if not isinstance(obj, EnvKit):
        raise ConfigError(
            f"{where!r} is a {type(obj).__name__}, not an environment kit",
            hint="point at a reharness.envs.EnvKit object or a function returning one "
            "(for a plain gymnasium environment use --env gym:ID)",
        )
    return _checked(obj.with_source(source), where)


def _checked(kit: EnvKit, where: str) -> EnvKit:
    directions = _direction_names()
    problems = kit.check(directions)
    if problems:
        raise ConfigError(
            f"kit {kit.name!r} ({where}) is invalid: " + "; ".join(problems),
            hint="fix the kit's fields (docs/kits.md lists them)",
        )
    return kit


@functools.cache
def _direction_names() -> frozenset[str] | None:
    """The shipped repair directions (read from the pool's data file without importing the pool layer)."""
    from importlib import resources

    import yaml

    try:
        text = resources.files("reharness.pool").joinpath("directions.yaml").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):  # pragma: no cover - shipped file
        return None
    data = yaml.safe_load(text) or {}
    return frozenset(
        str(d["name"]) for d in data.get("directions", []) if isinstance(d, dict) and "name" in d
    )


@dataclass(frozen=True)
class KitInfo:
    """One row of ``reharness envs``: a kit's name, where it came from, its gymnasium id and summary."""

    name: str
    source: str
    gym_id: str
    summary: str


def all_kits(load: bool = True) -> list[KitInfo]:
    """Every kit this process can find: built-ins, registered ones, installed distributions' entry points.

    A kit that fails to load is listed with its error as the summary (``load=False``: no kit is imported)."""
    rows: list[KitInfo] = []
    for name, (_, gym_id, _) in BUILTIN_KITS.items():
        rows.append(KitInfo(name, "built-in", gym_id, get_kit(name).summary if load else ""))
    for name, kit in _REGISTERED.items():
        if name not in BUILTIN_KITS:
            rows.append(KitInfo(name, kit.source, kit.gym_id or "", kit.summary))
    for name, point in entry_point_kits().items():
        if name in BUILTIN_KITS or name in _REGISTERED:
            continue
        dist = getattr(point.dist, "name", None) or "?"
        summary, gym_id = "", ""
        if load:
            try:
                kit = get_kit(name)
                summary, gym_id = kit.summary, kit.gym_id or ""
            except (ConfigError, UnknownNameError) as exc:
                summary = f"(fails to load: {exc.message})"
        rows.append(KitInfo(name, f"entry point ({dist})", gym_id, summary))
    return rows


def data_loading_kits() -> list[str]:
    """The built-in kits whose ``--data`` loader reads real task files (for hints that name where to go)."""
    return [name for name in BUILTIN_KITS if get_kit(name).data_loader is not None]


# ---------------------------------------------------------------------------------------------- compat
def resolve_env_name(name: str) -> EnvKit:
    """The kit of ``name`` (kept for callers that read ``.name``; same as :func:`get_kit`)."""
    return get_kit(name)


def env_class(name: str) -> Callable[..., Any]:
    """The class (or factory) of an environment, imported without building one (e.g. for ``run_metrics``)."""
    return get_kit(name).env_factory()


def make_env(name: str, **kwargs: Any) -> TextEnvLike:
    """Construct an environment by name, gymnasium id, ``gym:ID`` or ``module:attribute`` (unwrapped)."""
    return get_kit(name).make(**kwargs)
