"""Finding and reading the runs under a path: one run directory, or a folder of runs (``run --out DIR``).

Reading is read-only: a run still being written (its last line partial) is shown up to its last complete
episode, and nothing in the directory is changed (the store's own reader repairs a cut line; a viewer must
not touch a file another process is appending to).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from reharness.core.errors import DataError
from reharness.store.records import EpisodeRecord, RunMeta
from reharness.store.run_store import RunStore


def is_run_dir(path: Path) -> bool:
    return (path / "run.json").is_file()


def run_dirs_under(path: Path, depth: int = 3) -> list[Path]:
    """Every run directory at or below ``path`` (up to ``depth`` levels), sorted by path."""
    if is_run_dir(path):
        return [path]
    found: list[Path] = []
    if depth > 0 and path.is_dir():
        for child in sorted(p for p in path.iterdir() if p.is_dir()):
            found += run_dirs_under(child, depth - 1)
    return found


def read_run(path: Path) -> tuple[RunMeta, list[EpisodeRecord]]:
    """A run's metadata and its complete episodes (by episode index), without modifying the directory."""
    meta = RunStore(path).read_meta()
    episodes_path = path / "episodes.jsonl"
    data = episodes_path.read_bytes() if episodes_path.is_file() else b""
    data = data[: data.rfind(b"\n") + 1]  # a partial last line is an episode still being written
    episodes: dict[int, EpisodeRecord] = {}
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = EpisodeRecord.model_validate_json(line)
        except ValidationError as exc:
            raise DataError(f"{episodes_path}:{lineno} is not a valid episode record: {exc}") from exc
        episodes[record.episode_index] = record
    return meta, sorted(episodes.values(), key=lambda e: e.episode_index)
