"""Resumable JSON-lines files: the one reader every appender's resume goes through.

Writers append one JSON document per line and end each with a newline, so after an interruption (a killed
process, a full disk) at most the bytes after the last newline are a torn line. :func:`jsonl_lines` returns
the complete lines with their numbers and drops the torn tail (``repair=True`` also cuts it off the file, so
the next append starts on a clean line). A complete line that is not valid JSON is not an interruption but
damage: :func:`read_jsonl` raises a :class:`~reharness.core.errors.DataError` naming the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.core.errors import DataError


def jsonl_lines(path: str | Path, *, repair: bool = False) -> list[tuple[int, bytes]]:
    """``(line number, bytes)`` of every complete, non-blank line; a torn tail is dropped (and, with
    ``repair``, truncated from the file). A missing file has no lines."""
    file = Path(path)
    if not file.is_file():
        return []
    data = file.read_bytes()
    keep = data.rfind(b"\n") + 1
    if repair and keep < len(data):
        with open(file, "r+b") as handle:
            handle.truncate(keep)
    return [(n, line) for n, line in enumerate(data[:keep].splitlines(), start=1) if line.strip()]


def read_jsonl(path: str | Path, *, repair: bool = False) -> list[Any]:
    """The JSON documents of the complete lines of ``path`` (see the module docstring)."""
    out = []
    for number, line in jsonl_lines(path, repair=repair):
        try:
            out.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(
                f"{path}:{number} is not a JSON line ({exc})",
                hint="the file is damaged in the middle: restore it, or delete it to start again",
            ) from None
    return out
