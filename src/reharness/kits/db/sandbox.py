"""An in-memory SQLite database per episode that runs untrusted agent SQL safely and MySQL-like.

Agent SQL is untrusted. Each episode gets a fresh ``sqlite3.connect(":memory:")``; an authorizer refuses
ATTACH/DETACH, PRAGMA, virtual tables and dangerous or non-deterministic functions (``load_extension``,
``random``, ``randomblob``); connection limits cap string/blob size, SQL length and attached databases;
``max_page_count`` caps the database size; a :class:`~.functions.Budget` charged by the progress
handler (every 1,000 VM instructions) and by every Python callback stops runaway statements (recursive CTEs,
huge cross joins) deterministically, with a wall-clock backstop; results are fetched with a row cap.
Whatever the agent sends, :meth:`SqlSandbox.execute` returns an :class:`ExecResult` (rows or an error text)
and never raises.
"""

from __future__ import annotations

import contextlib
import ctypes
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reharness.kits.db import functions
from reharness.kits.db.dialect import Emulated, ForbiddenStatement, translate
from reharness.kits.db.grading import table_hash
from reharness.kits.db.sqltext import SqlSyntaxError, quote_ident

#: load_extension: code loading; random/randomblob: non-deterministic; printf: builds unbounded strings in C.
_DENIED_FUNCTIONS = frozenset(
    {"load_extension", "random", "randomblob", "printf", "fts3_tokenizer", "readfile", "writefile"}
)
_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one statement / one episode database."""

    budget_units: int = 10_000_000  # ~ VM instructions (≈ 0.3–0.5 s of SQLite work)
    wall_seconds: float = 2.0  # backstop for time spent outside the VM
    row_cap: int = 1_000  # rows fetched per statement
    max_length: int = 200_000  # bytes in one string/blob (MySQL TEXT holds 65,535)
    max_sql_chars: int = 20_000
    max_page_count: int = 8_192  # 32 MiB at 4 KiB pages
    memory_mb: int = 256  # SQLite heap growth allowed during one statement (when measurable)


@dataclass(frozen=True)
class ExecResult:
    """What one statement produced: rows, or an error message with its kind."""

    rows: list[tuple[Any, ...]] | None
    error: str | None = None
    error_kind: str = "none"
    kind: str = (
        "sql"  # sql | show_tables | show_columns | show_create | show_databases | show_index | use | empty
    )
    columns: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def text(self) -> str:
        """The untruncated observation text: ``str(rows)`` as MySQL's connector prints it, or the error."""
        return str(self.rows) if self.error is None else str(self.error)


def classify_error(message: str) -> str:
    """Map an error message to a stable error kind."""
    low = message.lower()
    if "timed out" in low or low == "interrupted":
        return "timeout"
    if "not authorized" in low or "authorization denied" in low:
        return "forbidden"
    if "no such column" in low or "has no column named" in low or "unknown column" in low:
        return "no_such_column"
    if "no such table" in low or "doesn't exist" in low:
        return "no_such_table"
    if "no such function" in low:
        return "no_such_function"
    if any(
        s in low for s in ("syntax error", "incomplete input", "unrecognized token", "one statement", "empty")
    ):
        return "syntax_error"
    if any(
        s in low for s in ("too big", "too long", "too much memory", "full", "out of memory", "longer than")
    ):
        return "resource_limit"
    return "other"


def _memory_probe() -> Any:
    """``sqlite3_memory_used`` of the SQLite library behind the ``sqlite3`` module, if reachable."""
    try:
        import _sqlite3

        fn = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
        fn.restype = ctypes.c_int64
        fn.argtypes = []
        int(fn())
        return fn
    except Exception:
        return None


_MEMORY_USED = _memory_probe()


class SqlSandbox:
    """One episode's database (see module docstring)."""

    def __init__(self, database: str, limits: SandboxLimits | None = None) -> None:
        self.database = database
        self.limits = limits or SandboxLimits()
        self._internal = True
        self._denied: str | None = None
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn = self._conn
        self._budget = functions.Budget(conn.interrupt)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.limits.max_length)
        conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, self.limits.max_sql_chars * 4)
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        conn.setlimit(sqlite3.SQLITE_LIMIT_WORKER_THREADS, 0)
        if hasattr(conn, "enable_load_extension"):  # absent when Python was built without extension loading
            conn.enable_load_extension(False)
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA max_page_count = {int(self.limits.max_page_count)}")
        functions.install(conn, self._budget, database)
        conn.set_authorizer(self._authorize)
        conn.set_progress_handler(self._progress, 1_000)
        self._memory_base = 0

    # ------------------------------------------------------------------ guards
    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None
    ) -> int:
        if self._internal:
            return _OK
        reason = None
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            reason = "ATTACH/DETACH is not allowed"
        elif action == sqlite3.SQLITE_PRAGMA:
            reason = f"PRAGMA {arg1 or ''} is not allowed".replace("  ", " ")
        elif action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
            reason = f"function {arg2}() is not allowed"
        elif action in (sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE):
            reason = "virtual tables are not allowed"
        if reason is None:
            return _OK
        self._denied = reason
        return _DENY

    def _progress(self) -> int:
        if not self._budget.charge(1_000):
            return 1
        check_memory = _MEMORY_USED is not None and (self._budget.used & 0xFFFF) < 1_000
        if check_memory and _MEMORY_USED() - self._memory_base > self.limits.memory_mb * 1_048_576:
            self._budget.trip("memory")
            return 1
        return 0

    def _start(self) -> None:
        self._budget.start(self.limits.budget_units, self.limits.wall_seconds)
        self._denied = None
        self._memory_base = int(_MEMORY_USED()) if _MEMORY_USED is not None else 0

    # ------------------------------------------------------------------ setup (trusted)
    def create_table(self, name: str, columns: Sequence[str], rows: Sequence[Sequence[str | None]]) -> None:
        """Create ``name`` with TEXT columns in the MySQL collation and insert ``rows`` (trusted input)."""
        cols = ", ".join(f"{quote_ident(c)} TEXT COLLATE {functions.COLLATION}" for c in columns)
        self._start()
        self._internal = True
        try:
            self._conn.execute(f"CREATE TABLE {quote_ident(name)} ({cols})")
            if rows:
                marks = ", ".join("?" for _ in columns)
                self._conn.executemany(
                    f"INSERT INTO {quote_ident(name)} VALUES ({marks})", [tuple(r) for r in rows]
                )
        finally:
            self._internal = False

    def close(self) -> None:
        self._conn.close()

    # ------------------------------------------------------------------ agent statements
    def execute(self, sql: str) -> ExecResult:
        """Run one agent statement; never raises."""
        if len(sql) > self.limits.max_sql_chars:
            return self._error(
                f"SQL statement too long ({len(sql)} > {self.limits.max_sql_chars} characters)"
            )
        try:
            parsed = translate(sql)
        except SqlSyntaxError as exc:
            return self._error(str(exc), "syntax_error")
        except ForbiddenStatement as exc:
            return self._error(str(exc), "forbidden")
        except Exception as exc:  # defensive: the translator must never crash an episode
            return self._error(f"could not parse the statement: {exc}", "syntax_error")
        if isinstance(parsed, Emulated):
            return self._emulate(parsed)
        return self._run(parsed.sql)

    def _run(self, sql: str, internal: bool = False) -> ExecResult:
        self._start()
        self._internal = internal
        cursor = None
        try:
            cursor = self._conn.execute(sql)
            rows = cursor.fetchmany(self.limits.row_cap) if cursor.description else []
            columns = [d[0] for d in cursor.description or ()]
            return ExecResult(rows=list(rows), columns=columns)
        except MemoryError:
            return self._error("out of memory", "resource_limit")
        except Exception as exc:
            return self._error(self._message(exc))
        finally:
            self._internal = False
            if cursor is not None:
                with contextlib.suppress(Exception):
                    cursor.close()

    def _message(self, exc: Exception) -> str:
        if self._budget.reason == "timeout":
            return "Query timed out"
        if self._budget.reason == "memory":
            return "Query used too much memory"
        if self._denied:
            return f"not authorized: {self._denied}"
        text = str(exc)
        if "user-defined function raised exception" in text and self._budget.udf_error:
            return f"function error: {self._budget.udf_error}"
        return text

    @staticmethod
    def _error(message: str, kind: str | None = None) -> ExecResult:
        return ExecResult(rows=None, error=message, error_kind=kind or classify_error(message))

    # ------------------------------------------------------------------ emulated MySQL commands
    def tables(self) -> list[str]:
        result = self._run(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite^_%' "
            "ESCAPE '^' ORDER BY name",
            internal=True,
        )
        return [str(r[0]) for r in result.rows or []]

    def resolve_table(self, name: str) -> str | None:
        for table in self.tables():
            if table == name:
                return table
        folded = [t for t in self.tables() if t.lower() == name.lower()]
        return folded[0] if folded else None

    def columns_of(self, table: str) -> list[tuple[Any, ...]]:
        result = self._run(f"PRAGMA table_info({quote_ident(table)})", internal=True)
        return list(result.rows or [])

    def _emulate(self, cmd: Emulated) -> ExecResult:
        kind = cmd.kind
        if kind == "empty":
            return ExecResult(rows=[], kind=kind)
        if kind == "show_tables":
            names = [t for t in self.tables() if cmd.like is None or functions.like(cmd.like, t)]
            listed: list[tuple[Any, ...]] = [(t, "BASE TABLE") if cmd.full else (t,) for t in names]
            return ExecResult(rows=listed, kind=kind)
        if kind == "show_databases":
            names = sorted({"information_schema", "mysql", "performance_schema", "sys", self.database})
            return ExecResult(
                rows=[(n,) for n in names if cmd.like is None or functions.like(cmd.like, n)], kind=kind
            )
        if kind == "use":
            if cmd.name is not None and cmd.name != self.database:
                return self._error(f"Unknown database '{cmd.name}'", "other")
            return ExecResult(rows=[], kind=kind)
        table = self.resolve_table(cmd.name or "")
        if table is None:
            return self._error(f"Table '{self.database}.{cmd.name}' doesn't exist", "no_such_table")
        info = self.columns_of(table)
        if kind == "show_index":
            return ExecResult(rows=[], kind=kind)
        if kind == "show_create":
            body = ",\n".join(f"  {quote_ident(str(c[1]))} {str(c[2]).lower() or 'text'}" for c in info)
            ddl = (
                f"CREATE TABLE {quote_ident(table)} (\n{body}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 "
                f"COLLATE={functions.COLLATION}"
            )
            return ExecResult(rows=[(table, ddl)], kind=kind, columns=[str(c[1]) for c in info])
        rows: list[tuple[Any, ...]] = []
        for _cid, col, ctype, notnull, default, pk in info:
            if cmd.like is not None and not functions.like(cmd.like, str(col)):
                continue
            null = "NO" if notnull else "YES"
            key = "PRI" if pk else ""
            type_text = str(ctype).lower() or "text"
            if cmd.full:
                privileges = "select,insert,update,references"
                rows.append((col, type_text, functions.COLLATION, null, key, default, "", privileges, ""))
            else:
                rows.append((col, type_text, null, key, default, ""))
        return ExecResult(rows=rows, kind="show_columns", columns=[str(r[0]) for r in rows])

    # ------------------------------------------------------------------ grading support
    def table_rows(self, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]] | None:
        """All rows of ``table`` restricted to ``columns`` (None when the query fails or runs away)."""
        cols = ", ".join(quote_ident(c) for c in columns)
        self._start()
        self._internal = True
        cursor = None
        try:
            cursor = self._conn.execute(f"SELECT {cols} FROM {quote_ident(table)}")
            return list(cursor.fetchall())
        except Exception:
            return None
        finally:
            self._internal = False
            if cursor is not None:
                with contextlib.suppress(Exception):
                    cursor.close()

    def table_hash(self, table: str, columns: Sequence[str]) -> str | None:
        """DBBench's table hash of ``table`` (None when the table cannot be read or is empty)."""
        rows = self.table_rows(table, columns)
        return None if rows is None else table_hash(rows)
