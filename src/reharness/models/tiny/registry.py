"""Which tiny agents exist, where their weights are, and what produced them.

A tiny agent is named ``<env>-<size>`` (``ENV-S``). Its HF model directory is looked up in order:

1. shipped inside the package: ``reharness/models/tiny/weights/<name>/``;
2. the cache: ``$REHARNESS_CACHE/tiny/<name>/`` (default cache root: ``$XDG_CACHE_HOME/reharness`` or
   ``~/.cache/reharness``).

:func:`resolve_tiny` trains a missing agent into the cache after saying so (or, with ``train=False``, fails
with the exact training command). Every directory holds ``provenance.json``.

Train on first use without an upward import: training renders solver demonstrations through the runtime, so
the trainer lives in the training layer (:mod:`reharness.training.tiny.train`), three layers above this one.
This module finds it the way plugins are found: through the entry-point group :data:`TRAINER_GROUP`, in which
reharness's own ``pyproject.toml`` declares ``default = "reharness.training.tiny.train:train_agent"``
(:func:`find_trainer`). So an installed reharness trains on first use from any caller (``reharness run
--agent tiny:NAME``, ``make_agent`` from a library, the OpenAI-compatible server); another distribution may
declare its own trainer in the group. Why not the alternatives: a string import of the training module here
would be the same upward dependency hidden from the layer test, and a registration function filled by the
training layer would only be filled when something above happened to import it first, so a library caller
would get different behaviour from the CLI. Where no trainer is declared (a source tree on ``PYTHONPATH``
without an install, or an install older than the declaration), the error names the training command and the
reinstall.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from reharness.core.errors import ConfigError, UnknownNameError, did_you_mean
from reharness.models.tiny.config import Recipe, kit_recipes, recipe_for, recipes

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
PROVENANCE = "provenance.json"
#: The entry-point group that declares tiny-agent trainers; :func:`find_trainer` takes the one named
#: :data:`TRAINER_NAME` (reharness declares it in its ``pyproject.toml``).
TRAINER_GROUP = "reharness.tiny_trainers"
TRAINER_NAME = "default"


class TinyTrainer(Protocol):
    """Trains ``recipe`` with ``seed`` into the model directory ``out`` (what
    :func:`reharness.training.tiny.train.train_agent` does)."""

    def __call__(
        self, recipe: Recipe, out: str | Path, seed: int = 0, threads: int | None = None, *, command: str
    ) -> Any: ...


def cache_root() -> Path:
    """Root of reharness's cache (``$REHARNESS_CACHE``, else the user cache dir)."""
    if os.environ.get("REHARNESS_CACHE"):
        return Path(os.environ["REHARNESS_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reharness"


def cache_dir(name: str) -> Path:
    """Where a trained-on-first-use tiny agent lives."""
    return cache_root() / "tiny" / name


def tiny_names() -> list[str]:
    """Every known tiny agent name (``ENV-S``, …: one per recipe of a built-in kit)."""
    return [f"{env}-{size}" for env, size in recipes()]


def parse_name(name: str) -> tuple[str, str]:
    """``ENV-S`` → (``ENV``, ``S``), with a clear error for unknown names."""
    env, _, size = name.rpartition("-")
    if (env, size) not in recipes() and size not in kit_recipes(env):  # a built-in's, or an installed kit's
        raise UnknownNameError(f"unknown tiny agent {name!r}", hint=did_you_mean(name, tiny_names()))
    return env, size


def train_command(name: str, seed: int = 0) -> str:
    """The command that trains tiny agent ``name`` (``ENV-SIZE``)."""
    env, _, size = name.rpartition("-")
    return f"reharness agent train --env {env} --size {size} --seed {seed}"


def search_paths(name: str) -> list[Path]:
    """Where tiny agent ``name`` may live, in lookup order: shipped in the package, then the cache."""
    return [WEIGHTS_DIR / name, cache_dir(name)]


def locate(name: str) -> Path | None:
    """The first of :func:`search_paths` holding a model directory (any ``ENV-SIZE`` name)."""
    return next((path for path in search_paths(name) if is_model_dir(path)), None)


def is_model_dir(path: Path) -> bool:
    """``path`` holds a tiny agent: a model config and its tokenizer."""
    return (path / "config.json").is_file() and (path / "tokenizer.json").is_file()


@dataclass(frozen=True)
class TinyAgentInfo:
    """One tiny agent: where it is (if anywhere) and its provenance."""

    name: str
    env: str
    size: str
    path: Path | None
    shipped: bool

    @property
    def provenance(self) -> dict[str, Any] | None:
        if self.path is None or not (self.path / PROVENANCE).is_file():
            return None
        data = json.loads((self.path / PROVENANCE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else None

    def as_dict(self) -> dict[str, Any]:
        prov = self.provenance or {}
        return {
            "name": self.name,
            "env": self.env,
            "size": self.size,
            "path": str(self.path) if self.path else None,
            "shipped": self.shipped,
            "params": prov.get("params"),
            "command": prov.get("command") or train_command(self.name),
        }


def find_tiny(name: str) -> TinyAgentInfo:
    """Locate built-in agent ``name`` (shipped, then cached); ``path`` is None when not trained yet."""
    env, size = parse_name(name)
    path = locate(name)
    return TinyAgentInfo(name, env, size, path, path is not None and path == WEIGHTS_DIR / name)


def list_tiny() -> list[TinyAgentInfo]:
    return [find_tiny(name) for name in tiny_names()]


def resolve_tiny(
    name: str,
    train: bool = True,
    notify: Callable[[str], None] | None = None,
    threads: int | None = None,
) -> Path:
    """The model directory of tiny agent ``name`` (shipped, else cached; any ``ENV-SIZE`` name).

    A built-in agent found in neither place is trained into the cache first when ``train`` is true (after
    ``notify`` says so, default stderr); otherwise the error names the exact training command.
    """
    path = locate(name)
    if path is not None:
        return path
    command = train_command(name)
    target = cache_dir(name)
    env, _, size = name.rpartition("-")
    if (env, size) not in recipes():
        looked = ", ".join(str(p) for p in search_paths(name))
        raise ConfigError(
            f"tiny agent {name!r} is not available (looked in {looked})",
            hint=f"train it with `{command}` (it is cached under {target})",
        )
    if not train:
        raise ConfigError(
            f"tiny agent {name!r} is not shipped and not trained yet",
            hint=f"train it once with: {command}",
        )
    trainer = find_trainer()
    if trainer is None:
        raise ConfigError(
            f"tiny agent {name!r} is not trained yet, and no tiny-agent trainer is installed to train it "
            f"(entry-point group {TRAINER_GROUP!r}, name {TRAINER_NAME!r})",
            hint=f"train it once with: {command}; or install reharness (`pip install -e .` in a checkout) "
            "so that its trainer is declared",
        )
    message = f"tiny agent {name!r} is not trained yet; training it now into {target} (up to ~30 min on CPU)"
    (notify or (lambda m: print(m, file=sys.stderr)))(message)
    trainer(recipe_for(env, size), target, seed=0, threads=threads, command=command)
    return target


def find_trainer() -> TinyTrainer | None:
    """The trainer declared as :data:`TRAINER_NAME` in the entry-point group :data:`TRAINER_GROUP` (the first
    found on ``sys.path`` if several distributions declare one), or None when none is declared."""
    found = metadata.entry_points(group=TRAINER_GROUP, name=TRAINER_NAME)
    entry = next(iter(found), None)
    if entry is None:
        return None
    try:
        trainer = entry.load()
    except Exception as exc:  # a trainer that fails to import: say which one and why
        raise ConfigError(
            f"the tiny-agent trainer {entry.value!r} (entry point {TRAINER_NAME!r} of {TRAINER_GROUP!r}) "
            f"failed to load: {type(exc).__name__}: {exc}",
            hint="reinstall the distribution that declares it (for reharness: `pip install -e .`)",
        ) from None
    if not callable(trainer):
        raise ConfigError(
            f"the tiny-agent trainer {entry.value!r} (entry point {TRAINER_NAME!r} of {TRAINER_GROUP!r}) "
            "is not callable",
            hint="the entry point must name a function (recipe, out, seed, threads, command=...)",
        )
    return trainer  # type: ignore[no-any-return]
