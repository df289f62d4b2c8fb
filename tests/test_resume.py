"""A run resumes only with its own options; an option added later reads as its default (or as before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from reharness.core.errors import ConfigError
from reharness.core.resume import refuse_other_options


class Options(BaseModel):
    k: int = 8
    steps: int = 20
    tags: list[str] = Field(default_factory=list)
    packets: str = "contested"


def _saved(tmp_path: Path, **values: object) -> Path:
    file = tmp_path / "config.json"
    file.write_text(json.dumps(values))
    return file


def test_no_saved_file_and_the_same_options_pass(tmp_path: Path) -> None:
    refuse_other_options(tmp_path / "missing.json", Options(), run="a run")
    file = _saved(tmp_path, **Options(k=4).model_dump())
    refuse_other_options(file, Options(k=4), run="a run")


def test_another_value_is_refused_naming_the_run_the_option_and_both_values(tmp_path: Path) -> None:
    file = _saved(tmp_path, **Options(k=4).model_dump())
    with pytest.raises(ConfigError, match=r"holds a run with k=4, not 8") as err:
        refuse_other_options(file, Options(), run="a run")
    assert str(tmp_path) in str(err.value) and "another --out" in str(err.value.hint)
    refuse_other_options(file, Options(steps=30, k=4), run="a run", free={"steps"})  # free options may change


def test_an_option_added_later_reads_as_its_default_or_as_the_earlier_behaviour(tmp_path: Path) -> None:
    file = _saved(tmp_path, k=8, steps=20)  # written before `tags` and `packets` existed
    refuse_other_options(file, Options(), run="a run")  # both at their defaults: the same run
    with pytest.raises(ConfigError, match=r"tags=\[\], not \['x'\]"):
        refuse_other_options(file, Options(tags=["x"]), run="a run")
    with pytest.raises(ConfigError, match=r"packets='all', not 'contested'"):
        refuse_other_options(file, Options(), run="a run", earlier={"packets": "all"})
    refuse_other_options(file, Options(packets="all"), run="a run", earlier={"packets": "all"})
