"""Durable episode writes with group commit, on one connection, off the event loop.

:meth:`EpisodeWriter.append` hands a finished episode to one writer thread and returns once the episode is on
disk: the thread takes every episode that finished meanwhile, writes their JSONL lines with one ``write``,
``flush`` and ``fsync``, then indexes them in one SQLite transaction on its single connection. So a run of
many short concurrent episodes pays one fsync per group instead of one per episode, the event loop never
waits on the disk, and the durability promise is unchanged: an episode reported as done (``append``
returned) survives a SIGKILL. The index is derived data (rebuilt from the JSONL by :meth:`RunStore.open`),
so it runs in WAL mode with ``synchronous=NORMAL``: safe against SIGKILL and power loss, with no fsync per
commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
from typing import Any

from reharness.store.records import EpisodeRecord
from reharness.store.run_store import RunStore, episode_row, index_connection

_STOP = object()


class EpisodeWriter:
    """Group-committing writer of one run's episodes (see module docstring); use as an async context."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.groups = 0  # fsync'ed groups written, for tests and benchmarks
        self.index_error: str | None = None  # the last failed index write (the JSONL line was written)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    async def __aenter__(self) -> EpisodeWriter:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="reharness-store", daemon=True)
            self._thread.start()

    async def append(self, episode: EpisodeRecord, line: str | None = None) -> None:
        """Write ``episode`` durably (as ``line``, its JSON, when the caller already has it); returns when
        its line is fsync'ed (raises what the write raised)."""
        self.start()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._queue.put((episode, line, loop, done))
        await done

    async def close(self) -> None:
        """Finish pending writes and stop the thread."""
        if self._thread is not None:
            self._queue.put(_STOP)
            await asyncio.to_thread(self._thread.join)
            self._thread = None

    def _run(self) -> None:
        fh: Any = None
        db: sqlite3.Connection | None = None
        fatal: BaseException | None = None
        try:
            fh = open(self.store.episodes_path, "ab")  # noqa: SIM115 - held for the writer's life
        except OSError as exc:  # every append then fails with this error instead of waiting forever
            fatal = exc
        try:
            db = index_connection(self.store.index_path)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:  # the index is derived: write the JSONL alone
            self.index_error, db = f"{type(exc).__name__}: {exc}", None
        try:
            while True:
                group = [self._queue.get()]
                while True:  # everything that finished while the last group was being written
                    try:
                        group.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                items = [item for item in group if item is not _STOP]
                if items and fatal is not None:
                    self._settle_all(items, fatal)
                elif items:
                    self._write(fh, db, items)
                if len(items) < len(group):
                    return
        finally:
            if fh is not None:
                fh.close()
            if db is not None:
                db.close()

    def _write(self, fh: Any, db: sqlite3.Connection | None, items: list[Any]) -> None:
        error: BaseException | None = None
        try:
            fh.write(
                b"".join((line or e.model_dump_json()).encode("utf-8") + b"\n" for e, line, _, _ in items)
            )
            fh.flush()
            os.fsync(fh.fileno())
            self.groups += 1
        except BaseException as exc:  # reported to every waiting episode; nothing is claimed as written
            error = exc
        if error is None and db is not None:
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO episodes VALUES (?,?,?,?,?,?,?,?,?)",
                        [episode_row(e) for e, _, _, _ in items],
                    )
            except sqlite3.Error as exc:  # the index is derived: the next open() rebuilds it from the JSONL
                self.index_error = f"{type(exc).__name__}: {exc}"
        self._settle_all(items, error)

    @staticmethod
    def _settle_all(items: list[Any], error: BaseException | None) -> None:
        for _, _, loop, done in items:
            with contextlib.suppress(RuntimeError):  # the loop closed while it was waiting
                loop.call_soon_threadsafe(_settle, done, error)


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.cancelled():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
