"""docs/kits.md stays the kit API reference: its field table names every field of EnvKit, and the paths it
mentions exist."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from reharness.envs import EnvKit

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "kits.md").read_text(encoding="utf-8")


def test_the_field_table_lists_every_kit_field() -> None:
    section = DOC[DOC.index("## The kit API") :]
    table = set(re.findall(r"^\| `([a-z_0-9]+)` \|", section, flags=re.MULTILINE))
    fields = {f.name for f in dataclasses.fields(EnvKit)}
    assert fields == table, (fields - table, table - fields)


def test_every_repository_path_it_mentions_exists() -> None:
    paths = set(re.findall(r"`((?:src|tests|examples|docs)/[^`\s]+)`", DOC))
    assert paths and all((ROOT / p).exists() for p in paths), [p for p in paths if not (ROOT / p).exists()]
