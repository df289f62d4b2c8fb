"""MySQL semantics installed into a SQLite connection: collation, LIKE, REGEXP and SQL functions.

MySQL 8 compares text with ``utf8mb4_0900_ai_ci``: case- and accent-insensitive (``'Montreal' =
'Montréal'``), with punctuation before digits before letters. :func:`sort_key` approximates that order and is
installed as the default collation of every TEXT column; ``LIKE`` is replaced by an accent- and
case-insensitive matcher with MySQL's default ``\\`` escape; ``REGEXP`` is case-insensitive. MySQL functions
agents use (``md5``, ``concat``, ``concat_ws``, ``if``, ``left``, ``locate``, ``substring_index``, ``format``,
``str_to_date`` …) are added. Every callback charges a shared :class:`Budget`, so a runaway query that spends
its time in Python callbacks (charged by call and by argument length) is interrupted like one that spends
it in SQLite's VM. No single call may take super-linear time, since nothing interrupts a call once it runs:
``REGEXP`` uses RE2 (linear, no backtracking), and a matcher's worst case (pattern × subject) is charged
before it runs, so a call too big for the statement is refused.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
import unicodedata
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]

from reharness.kits.db.dialect import COLLATION, NUM_FUNCTION

COLLATION_ALIASES = (COLLATION, "utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8_general_ci")
MAX_TEXT = 100_000
_EXTRA_FOLDS = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "æ": "ae", "œ": "oe", "ı": "i", "ħ": "h"})


class Budget:
    """Work allowed to one statement: SQLite VM instructions plus charged Python callbacks."""

    def __init__(self, interrupt: Callable[[], None]) -> None:
        self._interrupt = interrupt
        self.used = 0
        self.limit = 0
        self.deadline = 0.0
        self.reason: str | None = None
        self.udf_error: str | None = None

    def start(self, limit: int, wall_s: float) -> None:
        self.used = 0
        self.limit = limit
        self.deadline = time.monotonic() + wall_s
        self.reason = None
        self.udf_error = None

    def charge(self, units: int) -> bool:
        """Spend ``units``; on exhaustion interrupt the statement and return False."""
        if self.reason is not None:
            return False
        self.used += units
        if self.used > self.limit or ((self.used & 0x3FFF) < units and time.monotonic() > self.deadline):
            self.trip("timeout")
            return False
        return True

    def trip(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self._interrupt()


def fold(text: str) -> str:
    """Case- and accent-folded text (``'Montréal'`` -> ``'montreal'``); short texts are cached."""
    return _fold_cached(text) if len(text) <= _CACHED_CHARS else _fold(text)


def sort_key(text: str) -> str:
    """A key whose plain string order approximates MySQL's ``utf8mb4_0900_ai_ci`` order."""
    return _sort_key_cached(text) if len(text) <= _CACHED_CHARS else _sort_key(text)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_EXTRA_FOLDS))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().translate(_EXTRA_FOLDS)


def _char_rank(c: str) -> str:
    if c.isspace():
        return "0"
    if c.isdigit():
        return "2"
    if c.isalpha():
        return "3"
    return "1"


def _sort_key(text: str) -> str:
    return "".join(_char_rank(c) + c for c in fold(text))


#: Only short texts are memoised, so hostile queries over huge strings cannot grow the caches without bound.
_CACHED_CHARS = 256
_fold_cached = lru_cache(maxsize=65_536)(_fold)
_sort_key_cached = lru_cache(maxsize=65_536)(_sort_key)


def mysql_num(value: Any) -> Any:
    """MySQL's string-to-number conversion: the longest numeric prefix, else 0 (``'1,234'`` -> 1)."""
    if value is None or isinstance(value, int | float):
        return value
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    m = _NUM_PREFIX.match(text)
    if not m:
        return 0
    literal = m.group(1)
    if re.fullmatch(r"[+-]?\d+", literal) and len(literal) < 19:
        return int(literal)
    return float(literal)


_NUM_PREFIX = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


# ---------------------------------------------------------------------------------------------- LIKE
def _like_program(pattern: str, escape: str) -> list[tuple[re.Pattern[str], int]]:
    if len(pattern) <= _CACHED_CHARS:
        return _like_program_cached(pattern, escape)
    return _compile_like(pattern, escape)


def _compile_like(pattern: str, escape: str) -> list[tuple[re.Pattern[str], int]]:
    """Split a LIKE pattern at ``%`` into fixed-length segments (regex, length) over folded text."""
    segments: list[list[str]] = [[]]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            segments[-1].append(fold(pattern[i + 1]))
            i += 2
            continue
        if c == "%":
            segments.append([])
        elif c == "_":
            segments[-1].append("\0WILD")
        else:
            segments[-1].append(fold(c))
        i += 1
    program = []
    for seg in segments:
        regex = "".join("." if part == "\0WILD" else re.escape(part) for part in seg)
        length = sum(1 if part == "\0WILD" else len(part) for part in seg)
        program.append((re.compile(regex, re.DOTALL), length))
    return program


_like_program_cached = lru_cache(maxsize=4_096)(_compile_like)


def like(pattern: Any, value: Any, escape: Any = "\\") -> int | None:
    """MySQL ``value LIKE pattern`` (case/accent-insensitive, ``\\`` escape); linear-time matching."""
    if pattern is None or value is None or escape is None:
        return None
    program = _like_program(str(pattern), str(escape)[:1])
    subject = fold(str(value))
    if len(program) == 1:
        regex, _ = program[0]
        return 1 if regex.fullmatch(subject) else 0
    first, first_len = program[0]
    if not first.match(subject):
        return 0
    pos = first_len
    last, last_len = program[-1]
    for regex, _ in program[1:-1]:
        m = regex.search(subject, pos)
        if m is None:
            return 0
        pos = m.end()
    tail = len(subject) - last_len
    return 1 if tail >= pos and last.fullmatch(subject, tail) else 0


# ---------------------------------------------------------------------------------------------- REGEXP
#: POSIX classes as MySQL 8's ICU reads them (Unicode letters, not only ASCII), in RE2 syntax.
_POSIX = {
    "[:digit:]": r"\p{Nd}",
    "[:alpha:]": r"\pL",
    "[:alnum:]": r"\pL\p{Nd}",
    "[:space:]": r"\s",
    "[:upper:]": r"\p{Lu}",
    "[:lower:]": r"\p{Ll}",
    "[:punct:]": r"!-/:-@\[-`{-~",
}
MAX_REGEXP_PATTERN = 500
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.case_sensitive = False
_RE2_OPTIONS.max_mem = 8 << 20  # program + DFA cache: a bigger pattern is refused, never slow


@lru_cache(maxsize=1_024)
def _regexp_program(pattern: str) -> Any:
    """``pattern`` compiled by RE2, whose matching time is linear in the subject (no backtracking)."""
    if len(pattern) > MAX_REGEXP_PATTERN:
        raise ValueError(f"REGEXP pattern longer than {MAX_REGEXP_PATTERN} characters")
    if re.search(r"\\[1-9]|\(\?<?[=!]", pattern):
        raise ValueError("REGEXP back-references and look-arounds are not supported")
    for posix, plain in _POSIX.items():
        pattern = pattern.replace(posix, plain)
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise ValueError(f"invalid REGEXP pattern: {exc}") from exc


def regexp(pattern: Any, value: Any) -> int | None:
    """MySQL ``value REGEXP pattern`` (case-insensitive search, linear in the subject)."""
    if pattern is None or value is None:
        return None
    return 1 if _regexp_program(_text(pattern)).search(_text(value)) else 0


def match_work(pattern: Any, subject: Any) -> int:
    """Budget units charged before matching ``pattern`` against ``subject``: their sizes' product / 64.

    RE2 and the LIKE matcher are linear in the subject for a fixed pattern, but a pattern of many wildcards
    (long ``_`` runs, bounded repeats) can cost about subject × pattern steps inside one call, where nothing
    can interrupt it; charging that bound first refuses a call too big for the statement's budget instead of
    running it.
    """
    sizes = [len(a) for a in (pattern, subject) if isinstance(a, str | bytes)]
    return (sizes[0] * sizes[1]) // 64 if len(sizes) == 2 else 0


# ---------------------------------------------------------------------------------------------- functions
def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _capped(text: str) -> str:
    if len(text) > MAX_TEXT:
        raise ValueError(f"result longer than {MAX_TEXT} characters")
    return text


def _md5(value: Any) -> str | None:
    return None if value is None else hashlib.md5(_text(value).encode("utf-8")).hexdigest()


def _concat(*args: Any) -> str | None:
    if any(a is None for a in args):
        return None
    return _capped("".join(_text(a) for a in args))


def _concat_ws(sep: Any, *args: Any) -> str | None:
    if sep is None:
        return None
    return _capped(_text(sep).join(_text(a) for a in args if a is not None))


def _if(cond: Any, yes: Any, no: Any) -> Any:
    truthy = cond is not None and mysql_num(cond) != 0
    return yes if truthy else no


def _left(s: Any, n: Any) -> str | None:
    return None if s is None or n is None else _text(s)[: max(0, int(mysql_num(n)))]


def _right(s: Any, n: Any) -> str | None:
    if s is None or n is None:
        return None
    k = max(0, int(mysql_num(n)))
    return _text(s)[-k:] if k else ""


def _locate(sub: Any, s: Any, pos: Any = 1) -> int | None:
    if sub is None or s is None or pos is None:
        return None
    start = max(int(mysql_num(pos)), 1) - 1
    return fold(_text(s)).find(fold(_text(sub)), start) + 1


def _substring_index(s: Any, delim: Any, count: Any) -> str | None:
    if s is None or delim is None or count is None:
        return None
    text, d, n = _text(s), _text(delim), int(mysql_num(count))
    if not d or n == 0:
        return ""
    parts = text.split(d)
    return d.join(parts[:n]) if n > 0 else d.join(parts[n:])


def _repeat(s: Any, n: Any) -> str | None:
    if s is None or n is None:
        return None
    count = max(0, int(mysql_num(n)))
    if count * len(_text(s)) > MAX_TEXT:
        raise ValueError(f"result longer than {MAX_TEXT} characters")
    return _text(s) * count


def _pad(left: bool) -> Callable[[Any, Any, Any], str | None]:
    def pad(s: Any, n: Any, fill: Any) -> str | None:
        if s is None or n is None or fill is None:
            return None
        width = int(mysql_num(n))
        if width > MAX_TEXT:
            raise ValueError(f"result longer than {MAX_TEXT} characters")
        text, f = _text(s), _text(fill)
        if width <= len(text) or not f:
            return text[: max(width, 0)]
        padding = (f * (width // len(f) + 1))[: width - len(text)]
        return padding + text if left else text + padding

    return pad


def _format(*args: Any) -> str | None:
    """MySQL ``FORMAT(x, d[, locale])`` (replaces SQLite's printf-style ``format`` for every arity)."""
    if len(args) not in (2, 3):
        raise ValueError("FORMAT takes 2 or 3 arguments: FORMAT(number, decimals[, locale])")
    x, d = args[0], args[1]
    if x is None or d is None:
        return None
    digits = max(0, min(int(mysql_num(d)), 30))
    return f"{float(mysql_num(x)):,.{digits}f}"


def _truncate(x: Any, d: Any) -> float | None:
    if x is None or d is None:
        return None
    factor = 10.0 ** int(mysql_num(d))
    return int(float(mysql_num(x)) * factor) / factor


_STRPTIME = {"%M": "%B", "%b": "%b", "%d": "%d", "%e": "%d", "%c": "%m", "%m": "%m", "%Y": "%Y", "%y": "%y"}


def _str_to_date(s: Any, fmt: Any) -> str | None:
    if s is None or fmt is None:
        return None
    py_fmt = re.sub(r"%[a-zA-Z]", lambda m: _STRPTIME.get(m.group(), m.group()), _text(fmt))
    try:
        return datetime.strptime(_text(s).strip(), py_fmt).strftime("%Y-%m-%d")
    except ValueError:
        return None


def _date_part(index: int) -> Callable[[Any], int | None]:
    def part(d: Any) -> int | None:
        m = re.match(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})", _text(d)) if d is not None else None
        return int(m.group(index)) if m else None

    return part


def _collate(a: str, b: str) -> int:
    ka, kb = sort_key(a), sort_key(b)
    return (ka > kb) - (ka < kb)


def _collate_bin(a: str, b: str) -> int:
    return (a > b) - (a < b)


_FUNCTIONS: list[tuple[str, int, Callable[..., Any]]] = [
    (NUM_FUNCTION, 1, mysql_num),
    ("md5", 1, _md5),
    ("concat", -1, _concat),
    ("concat_ws", -1, _concat_ws),
    ("if", 3, _if),
    ("left", 2, _left),
    ("right", 2, _right),
    ("mysql_left", 2, _left),
    ("mysql_right", 2, _right),
    ("mid", 3, lambda s, p, n: None if s is None else _text(s)[int(mysql_num(p)) - 1 :][: int(mysql_num(n))]),
    ("locate", 2, _locate),
    ("locate", 3, _locate),
    ("char_length", 1, lambda s: None if s is None else len(_text(s))),
    ("character_length", 1, lambda s: None if s is None else len(_text(s))),
    ("lcase", 1, lambda s: None if s is None else _text(s).lower()),
    ("ucase", 1, lambda s: None if s is None else _text(s).upper()),
    ("reverse", 1, lambda s: None if s is None else _text(s)[::-1]),
    ("isnull", 1, lambda x: 1 if x is None else 0),
    ("substring_index", 3, _substring_index),
    ("repeat", 2, _repeat),
    ("space", 1, lambda n: _repeat(" ", n)),
    ("lpad", 3, _pad(True)),
    ("rpad", 3, _pad(False)),
    ("format", -1, _format),
    ("truncate", 2, _truncate),
    ("str_to_date", 2, _str_to_date),
    ("year", 1, _date_part(1)),
    ("month", 1, _date_part(2)),
    ("day", 1, _date_part(3)),
    ("dayofmonth", 1, _date_part(3)),
    ("regexp", 2, regexp),
    ("regexp_like", 2, lambda s, p: regexp(p, s)),
    ("like", 2, like),
    ("like", 3, like),
]


#: Functions whose worst case is the product of their first two arguments' sizes (see :func:`match_work`).
_MATCHERS = frozenset({"regexp", "regexp_like", "like"})


def install(conn: sqlite3.Connection, budget: Budget, database: str) -> None:
    """Register the MySQL collations and functions on ``conn``; every callback charges ``budget``."""

    def guarded(fn: Callable[..., Any], cost: int, matcher: bool = False) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            size = sum(len(a) for a in args if isinstance(a, str | bytes))
            work = match_work(args[0], args[1]) if matcher else 0
            if not budget.charge(cost + size // 64 + work):
                return None
            try:
                return fn(*args)
            except Exception as exc:
                budget.udf_error = str(exc)
                raise

        return call

    def collate(a: str, b: str) -> int:
        return _collate(a, b) if budget.charge(20 + (len(a) + len(b)) // 64) else 0

    for name in COLLATION_ALIASES:
        conn.create_collation(name, collate)
    conn.create_collation("utf8mb4_bin", _collate_bin)
    for name, nargs, fn in _FUNCTIONS:
        conn.create_function(name, nargs, guarded(fn, 40, name in _MATCHERS), deterministic=True)
    conn.create_function("database", 0, lambda: database, deterministic=True)
    conn.create_function("schema", 0, lambda: database, deterministic=True)
    conn.create_function("version", 0, lambda: "8.0.0-reharness-sqlite", deterministic=True)
