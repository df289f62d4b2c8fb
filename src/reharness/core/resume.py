"""Resuming a run only with the options it was started with.

A run directory keeps its resolved options (``r1_config.json``, ``s_config.json``, ``train_config.json``).
Rerunning the same command resumes it; rerunning with other options would mix two experiments in one
directory, so it is refused with the first option that differs. An option added to the program after the
file was written reads as its default there — or, where the default changed what runs do, as ``earlier``
(what runs did before the option existed).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from reharness.core.errors import ConfigError

SAME_OPTIONS_HINT = "use another --out (or the same options to resume it)"


def refuse_other_options(
    file: Path,
    config: BaseModel,
    *,
    run: str,
    free: Collection[str] = (),
    earlier: Mapping[str, Any] | None = None,
    hint: str = SAME_OPTIONS_HINT,
) -> None:
    """Raise a :class:`ConfigError` when ``file`` (a saved ``config``) holds another value of an option
    not in ``free``; ``run`` names the run in the message (``"an experiment s run"``). No file: no check."""
    if not file.is_file():
        return
    old = json.loads(file.read_text(encoding="utf-8"))
    changed = other_options(old, config.model_dump(mode="json"), type(config), earlier)
    for key, (before, after) in changed.items():
        if key not in free:
            raise ConfigError(f"{file.parent} holds {run} with {key}={before!r}, not {after!r}", hint=hint)


def other_options(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    model: type[BaseModel],
    earlier: Mapping[str, Any] | None = None,
) -> dict[str, tuple[Any, Any]]:
    """The options (sorted by name) whose values differ between two saved configs of ``model``, each as
    ``(old, new)``; an option missing from a config (written before it existed) reads as ``earlier`` or as
    its default."""
    added = {name: f.get_default(call_default_factory=True) for name, f in model.model_fields.items()}
    added |= dict(earlier or {})
    pairs = {key: (old.get(key, added.get(key)), new.get(key, added.get(key))) for key in set(old) | set(new)}
    return {key: pair for key, pair in sorted(pairs.items()) if pair[0] != pair[1]}
