"""Append-only run directories and the SQLite index.

Layout of ``--out DIR``::

    DIR/index.sqlite            runs and episodes of every run under DIR (derived; rebuilt from JSONL)
    DIR/<run_id>/run.json       RunMeta: the resolved config
    DIR/<run_id>/episodes.jsonl one EpisodeRecord per line, appended and fsync'ed as each episode finishes
                            (group commit: see :mod:`reharness.store.writer`)

Nothing is lost: a run killed at any moment (even SIGKILL mid-write) is resumed by the same command; a
partial last line is cut off, finished episodes are kept, and only the missing ones are run again.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from reharness.core.errors import DataError, StoreError
from reharness.core.jsonl import jsonl_lines
from reharness.store.records import EpisodeRecord, RunMeta

_INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, env TEXT, policy_id TEXT, harness_id TEXT, n INTEGER, seed INTEGER,
    created TEXT, path TEXT, config_hash TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT, episode_index INTEGER, task_id TEXT, task_identity TEXT, success INTEGER, score REAL,
    num_steps INTEGER, termination TEXT, failure_codes TEXT,
    PRIMARY KEY (run_id, episode_index)
);
"""


class RunStore:
    """One run directory: its metadata, its episodes and its rows in the parent's SQLite index."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.meta_path = self.run_dir / "run.json"
        self.episodes_path = self.run_dir / "episodes.jsonl"
        self.index_path = self.run_dir.parent / "index.sqlite"

    # ---------------------------------------------------------------- open / resume
    def open(self, meta: RunMeta, overwrite: bool = False) -> dict[int, EpisodeRecord]:
        """Create the run, or resume it if it exists with the same config; return finished episodes."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.meta_path.exists() and not overwrite:
            existing = self.read_meta()
            if existing.config_hash != meta.config_hash:
                raise StoreError(
                    f"{self.run_dir} holds a run with a different configuration "
                    f"({existing.config_hash} != {meta.config_hash})",
                    hint="pass --overwrite to replace it, or choose another --out directory",
                )
            meta = existing
        else:
            if overwrite and self.episodes_path.exists():
                self.episodes_path.unlink()
            self.meta_path.write_text(meta.model_dump_json(indent=2), encoding="utf-8")
        done = {e.episode_index: e for e in self._read_and_repair()}
        with self._index() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    meta.run_id,
                    meta.env,
                    meta.policy_id,
                    meta.harness.get("id"),
                    meta.n,
                    meta.seed,
                    meta.created,
                    str(self.run_dir.resolve()),
                    meta.config_hash,
                ),
            )
            db.execute("DELETE FROM episodes WHERE run_id = ?", (meta.run_id,))
            db.executemany(
                "INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?)", [episode_row(e) for e in done.values()]
            )
        return done

    def read_meta(self) -> RunMeta:
        try:
            return RunMeta.model_validate_json(self.meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(
                f"{self.run_dir} is not a run directory (no run.json)",
                hint="pass a directory created by `reharness run`",
            ) from None
        except ValidationError as exc:
            raise DataError(f"{self.meta_path} is not a valid run.json: {exc.errors()[0]['msg']}") from exc

    def _read_and_repair(self) -> list[EpisodeRecord]:
        """Read finished episodes; cut a partial trailing line left by a killed writer."""
        episodes: dict[int, EpisodeRecord] = {}
        for lineno, line in jsonl_lines(self.episodes_path, repair=True):
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError as exc:
                raise DataError(
                    f"{self.episodes_path}:{lineno} is not a valid episode record: {exc}"
                ) from exc
            episodes[record.episode_index] = record
        return sorted(episodes.values(), key=lambda e: e.episode_index)

    # ---------------------------------------------------------------- writing / reading
    def append(self, episode: EpisodeRecord, line: str | None = None) -> None:
        """Append one finished episode, fsync it and index it before returning (one connection each time).

        The simple synchronous path; batches write through :class:`~reharness.store.writer.EpisodeWriter`,
        which groups concurrent episodes into one fsync and keeps the disk off the event loop.
        """
        with open(self.episodes_path, "a", encoding="utf-8") as fh:
            fh.write((line or episode.model_dump_json()) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        with self._index() as db:
            db.execute("INSERT OR REPLACE INTO episodes VALUES (?,?,?,?,?,?,?,?,?)", episode_row(episode))

    def episodes(self) -> list[EpisodeRecord]:
        return self._read_and_repair()

    def iter_episodes(self) -> Iterator[EpisodeRecord]:
        yield from self.episodes()

    def _index(self) -> sqlite3.Connection:
        return index_connection(self.index_path)


def index_connection(path: Path) -> sqlite3.Connection:
    """A connection to the SQLite index at ``path``, its tables created if missing."""
    db = sqlite3.connect(path, timeout=30, check_same_thread=False)
    db.executescript(_INDEX_SCHEMA)
    return db


def episode_row(e: EpisodeRecord) -> tuple[object, ...]:
    """The index row of one episode."""
    return (
        e.run_id,
        e.episode_index,
        e.task_id,
        e.task_identity,
        int(e.success),
        e.score,
        e.num_steps,
        e.termination,
        json.dumps(e.failure_codes),
    )


def open_run_dir(path: str | Path) -> RunStore:
    """Open an existing run directory for reading (clear error if it is not one)."""
    store = RunStore(path)
    store.read_meta()
    return store


def list_runs(out_dir: str | Path) -> list[dict[str, object]]:
    """Runs recorded in ``out_dir/index.sqlite``."""
    index = Path(out_dir) / "index.sqlite"
    if not index.exists():
        return []
    with sqlite3.connect(index) as db:
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT r.*, COUNT(e.episode_index) AS finished, AVG(e.success) AS success_rate "
            "FROM runs r LEFT JOIN episodes e USING (run_id) GROUP BY r.run_id ORDER BY r.created"
        ).fetchall()
    return [dict(r) for r in rows]
