"""The one resumable JSON-lines reader: a torn last line is an interruption (dropped, cut off on repair); a
damaged complete line is an error that names the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from reharness.core.errors import DataError
from reharness.core.jsonl import jsonl_lines, read_jsonl


def test_a_torn_tail_is_dropped_and_cut_off_on_repair(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": 2}\n{"a": ')
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}]
    assert path.read_bytes().endswith(b'{"a": ')  # reading alone leaves the file as it is
    assert [n for n, _ in jsonl_lines(path, repair=True)] == [1, 3]
    assert path.read_bytes() == b'{"a": 1}\n\n{"a": 2}\n'
    assert read_jsonl(tmp_path / "missing.jsonl") == []


def test_a_damaged_complete_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(DataError, match=r"log.jsonl:2 is not a JSON line"):
        read_jsonl(path)
