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
    old, new = json.loads(file.read_text(encoding="utf-8")), config.model_dump(mode="json")
    fields = type(config).model_fields
    added = {name: f.get_default(call_default_factory=True) for name, f in fields.items()}
    added |= dict(earlier or {})
    for key in sorted(set(old) | set(new)):
        before = old.get(key, added.get(key))
        if key not in free and before != new.get(key):
            raise ConfigError(
                f"{file.parent} holds {run} with {key}={before!r}, not {new.get(key)!r}", hint=hint
            )
