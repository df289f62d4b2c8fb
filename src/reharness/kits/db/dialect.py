"""Translate one MySQL statement into SQLite, or recognise a MySQL command to emulate.

DBBench tasks and their stored answers were produced on MySQL 8. This module makes SQLite read agent SQL the
way MySQL would where it matters for results and table hashes:

* ``'...'`` and ``"..."`` are string literals with MySQL backslash escapes (``'Formby\\nUrban'``);
* backtick/bracket identifiers and identifiers starting with a digit are quoted for SQLite;
* ``||`` is OR and ``&&`` AND (MySQL's default sql_mode), ``/`` never truncates, ``<=>`` is ``IS``,
  ``RLIKE`` is ``REGEXP``, ``INSERT IGNORE`` is ``INSERT OR IGNORE``, ``TRUNCATE`` is ``DELETE``,
  ``GROUP_CONCAT(x SEPARATOR s)`` takes SQLite's separator argument, ``LEFT(``/``RIGHT(`` are functions;
* a TEXT column compared with a number (``Points > 50``, ``Year BETWEEN 1990 AND 2000``) is compared
  numerically with MySQL's prefix conversion (``_mysql_num``), not as text;
* decimal literals stored by ``VALUES``/``SET`` keep their MySQL text (``5.50`` stays ``'5.50'``);
* ``SHOW TABLES``, ``SHOW [FULL] COLUMNS``, ``DESCRIBE``, ``SHOW CREATE TABLE``, ``SHOW DATABASES``, ``USE``
  are returned as :class:`Emulated` commands for the sandbox to answer.

Several statements in one call are refused (as MySQL's connector does without ``multi=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

from reharness.kits.db.sqltext import SqlSyntaxError, Token, quote_ident, sqlite_string, tokenize

NUM_FUNCTION = "_mysql_num"
#: MySQL 8's default collation; every TEXT column (the task's and the agent's own tables) uses it.
COLLATION = "utf8mb4_0900_ai_ci"
_TEXT_TYPES = frozenset(
    {"TEXT", "VARCHAR", "CHAR", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "NVARCHAR", "NCHAR"}
)

_NOT_COLUMNS = frozenset(
    {
        "NULL", "TRUE", "FALSE", "AND", "OR", "NOT", "END", "THEN", "ELSE", "WHEN", "CASE", "SELECT", "FROM",
        "WHERE", "ON", "AS", "BY", "IS", "IN", "LIKE", "BETWEEN", "EXISTS", "DISTINCT", "ALL", "ANY", "SOME",
        "HAVING", "UNION", "LIMIT", "OFFSET", "INTERVAL", "SET", "VALUES", "DEFAULT", "CURRENT_DATE",
        "CURRENT_TIME", "CURRENT_TIMESTAMP", "REGEXP", "GLOB", "ESCAPE", "COLLATE",
    }
)  # fmt: skip
_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
#: MySQL functions named like SQLite keywords; renamed only when called (``LEFT(``, not ``LEFT JOIN``).
_KEYWORD_FUNCTIONS = {"LEFT": "mysql_left", "RIGHT": "mysql_right"}
_CLAUSE_END = frozenset({"WHERE", "ORDER", "LIMIT", "RETURNING"})


class ForbiddenStatement(ValueError):
    """A statement the sandbox refuses (ATTACH, PRAGMA, VACUUM …); the message is shown to the agent."""


@dataclass(frozen=True)
class Emulated:
    """A MySQL command answered by the sandbox instead of SQLite."""

    kind: str  # show_tables | show_columns | show_create | show_databases | show_index | use | empty
    name: str | None = None
    full: bool = False
    like: str | None = None


@dataclass(frozen=True)
class Translated:
    """SQLite text for the agent's statement."""

    sql: str


def translate(sql: str) -> Emulated | Translated:
    """Translate one MySQL statement (raises :class:`SqlSyntaxError` / :class:`ForbiddenStatement`)."""
    tokens = [Token("ws", " ", " ") if t.kind == "comment" else t for t in tokenize(sql)]
    statements: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.kind == "punct" and tok.value == ";":
            statements.append([])
        else:
            statements[-1].append(tok)
    non_empty = [s for s in statements if any(t.kind != "ws" for t in s)]
    if not non_empty:
        raise SqlSyntaxError("Query was empty")
    if len(non_empty) > 1:
        raise SqlSyntaxError("You can only execute one statement at a time.")
    stmt = non_empty[0]
    sig = [t for t in stmt if t.kind != "ws"]
    first = sig[0].upper
    if first in ("ATTACH", "DETACH", "PRAGMA", "VACUUM", "LOAD"):
        raise ForbiddenStatement(f"not authorized: {first} statements are not allowed in this database")
    if first in ("SHOW", "DESCRIBE", "DESC", "EXPLAIN", "USE"):
        command = _emulated(sig)
        if command is not None:
            return command
    if first == "TRUNCATE":
        rest = sig[2:] if len(sig) > 1 and sig[1].is_word("TABLE") else sig[1:]
        if len(rest) != 1:
            raise SqlSyntaxError("near TRUNCATE: syntax error (expected TRUNCATE [TABLE] name)")
        return Translated("DELETE FROM " + _render_name(rest[0]))
    return Translated(_Rewriter(stmt).render())


def _render_name(tok: Token) -> str:
    return quote_ident(tok.value) if tok.kind in ("ident", "word") else tok.text


def _name_of(sig: list[Token], i: int) -> tuple[str | None, int]:
    """Read ``name`` or ``db.name`` at ``sig[i]``; return (name, next index)."""
    if i >= len(sig) or sig[i].kind not in ("ident", "word", "string"):
        return None, i
    name = sig[i].value
    i += 1
    while i + 1 < len(sig) and sig[i].value == "." and sig[i + 1].kind in ("ident", "word"):
        name = sig[i + 1].value
        i += 2
    return name, i


def _like_clause(sig: list[Token], i: int) -> str | None:
    if i + 1 < len(sig) and sig[i].is_word("LIKE") and sig[i + 1].kind == "string":
        return sig[i + 1].value
    return None


def _emulated(sig: list[Token]) -> Emulated | None:
    first = sig[0].upper
    words = [t.upper for t in sig]
    if first in ("DESCRIBE", "DESC", "EXPLAIN"):
        if len(sig) > 1 and words[1] in ("SELECT", "UPDATE", "INSERT", "DELETE", "WITH", "QUERY", "PLAN"):
            return None
        name, i = _name_of(sig, 1)
        if name is None:
            raise SqlSyntaxError(f"near {first}: syntax error (expected {first} table_name)")
        column = sig[i].value if i < len(sig) and sig[i].kind in ("ident", "word", "string") else None
        return Emulated("show_columns", name, like=column)
    if first == "USE":
        name, _ = _name_of(sig, 1)
        return Emulated("use", name)
    i = 1
    full = False
    if i < len(words) and words[i] == "FULL":
        full, i = True, i + 1
    kind = words[i] if i < len(words) else ""
    if kind == "TABLES":
        j = i + 1
        if j < len(words) and words[j] in ("FROM", "IN"):
            _, j = _name_of(sig, j + 1)
        return Emulated("show_tables", None, full, _like_clause(sig, j))
    if kind in ("COLUMNS", "FIELDS") and i + 1 < len(words) and words[i + 1] in ("FROM", "IN"):
        name, j = _name_of(sig, i + 2)
        if j < len(words) and words[j] in ("FROM", "IN"):
            _, j = _name_of(sig, j + 1)
        return Emulated("show_columns", name, full, _like_clause(sig, j))
    if kind == "CREATE" and i + 1 < len(words) and words[i + 1] == "TABLE":
        name, _ = _name_of(sig, i + 2)
        return Emulated("show_create", name)
    if kind in ("DATABASES", "SCHEMAS"):
        return Emulated("show_databases", None, like=_like_clause(sig, i + 1))
    if kind in ("INDEX", "INDEXES", "KEYS") and i + 1 < len(words) and words[i + 1] in ("FROM", "IN"):
        name, _ = _name_of(sig, i + 2)
        return Emulated("show_index", name)
    if kind in ("WARNINGS", "ERRORS", "VARIABLES", "STATUS", "TRIGGERS", "PROCESSLIST", "GRANTS", "ENGINES"):
        return Emulated("empty")
    raise SqlSyntaxError(f"near SHOW: syntax error (unsupported SHOW {kind or 'statement'})")


def _decimal_text(text: str) -> str:
    """MySQL's string form of a DECIMAL literal: leading zeros dropped, scale kept (``05.50`` -> ``5.50``)."""
    whole, _, frac = text.partition(".")
    whole = whole.lstrip("0") or "0"
    return whole + ("." + frac if frac else "")


class _Rewriter:
    """Token-level rewrites of one statement (see the module docstring)."""

    def __init__(self, stmt: list[Token]) -> None:
        self.tokens = stmt
        self.sig = [i for i, t in enumerate(stmt) if t.kind != "ws"]
        self.text = [self._base(t) for t in stmt]
        self.prefix = [""] * len(stmt)
        self.suffix = [""] * len(stmt)

    def tok(self, k: int) -> Token | None:
        """The k-th significant token (``None`` outside the statement)."""
        return self.tokens[self.sig[k]] if 0 <= k < len(self.sig) else None

    @staticmethod
    def _base(t: Token) -> str:
        if t.kind == "string":
            if "\0" in t.value:
                return "(" + "||char(0)||".join(sqlite_string(p) for p in t.value.split("\0")) + ")"
            return sqlite_string(t.value)
        if t.kind == "ident" or (t.kind == "word" and t.value[:1].isdigit()):
            return quote_ident(t.value)
        if t.kind == "op":
            # MySQL's ``/`` never truncates (10 / 4 = 2.5); SQLite's does on integers.
            return {"||": " OR ", "&&": " AND ", "<=>": " IS ", "/": " * 1.0 / "}.get(t.value, t.value)
        if t.kind == "word" and t.value.upper() == "RLIKE":
            return "REGEXP"
        return t.text

    # ------------------------------------------------------------------ operand shapes
    def _is_column_token(self, k: int) -> bool:
        t = self.tok(k)
        if t is None:
            return False
        return t.kind == "ident" or (t.kind == "word" and t.value.upper() not in _NOT_COLUMNS)

    def _column_back(self, k: int) -> int | None:
        """Start index of a (qualified) column reference ending at significant index ``k``."""
        if not self._is_column_token(k):
            return None
        start = k
        while self._punct(start - 1, ".") and self._is_column_token(start - 2):
            start -= 2
        if self._punct(start - 1, ".") or self._punct(k + 1, "("):
            return None
        return start

    def _column_forward(self, k: int) -> int | None:
        """End index of a (qualified) column reference starting at significant index ``k``."""
        if not self._is_column_token(k) or self._punct(k - 1, "."):
            return None
        end = k
        while self._punct(end + 1, ".") and self._is_column_token(end + 2):
            end += 2
        if self._punct(end + 1, "(") or self._punct(end + 1, "."):
            return None
        return end

    def _number_at(self, k: int) -> bool:
        t = self.tok(k)
        if t is not None and t.kind == "op" and t.value in "+-":
            t = self.tok(k + 1)
        return t is not None and t.kind == "number"

    def _number_before(self, k: int) -> bool:
        t = self.tok(k)
        return t is not None and t.kind == "number" and not self._punct(k - 1, ".")

    def _punct(self, k: int, value: str) -> bool:
        t = self.tok(k)
        return t is not None and t.value == value and t.kind in ("punct", "op")

    def _wrap(self, start: int, end: int) -> None:
        self.prefix[self.sig[start]] += NUM_FUNCTION + "("
        self.suffix[self.sig[end]] += ")"

    # ------------------------------------------------------------------ passes
    def render(self) -> str:
        self._structural()
        self._numeric_comparisons()
        return "".join(p + t + s for p, t, s in zip(self.prefix, self.text, self.suffix, strict=True)).strip()

    def _structural(self) -> None:
        """INSERT IGNORE, GROUP_CONCAT SEPARATOR, MOD, and MySQL text for stored decimal literals."""
        first = self.tok(0)
        verb = first.upper if first is not None else ""
        creating = verb == "CREATE" and any(
            t is not None and t.is_word("TABLE") for t in (self.tok(1), self.tok(2))
        )
        depth = 0
        in_values = in_set = False
        concat_depths: list[int] = []
        for k in range(len(self.sig)):
            t = self.tokens[self.sig[k]]
            if t.kind == "punct" and t.value == "(":
                prev = self.tok(k - 1)
                if prev is not None and prev.is_word("GROUP_CONCAT"):
                    concat_depths.append(depth)
                depth += 1
                continue
            if t.kind == "punct" and t.value == ")":
                depth -= 1
                if concat_depths and concat_depths[-1] == depth:
                    concat_depths.pop()
                continue
            if t.kind == "word":
                word = t.value.upper()
                if word in _KEYWORD_FUNCTIONS and self._punct(k + 1, "("):
                    self.text[self.sig[k]] = _KEYWORD_FUNCTIONS[word]
                elif word == "IGNORE" and k == 1 and verb == "INSERT":
                    self.text[self.sig[k]] = "OR IGNORE"
                elif word == "SEPARATOR" and concat_depths:
                    self.text[self.sig[k]] = ","
                elif word == "MOD" and k > 0 and not self._punct(k + 1, "("):
                    self.text[self.sig[k]] = "%"
                elif word == "DIV" and k > 0 and not self._punct(k + 1, "("):
                    self.text[self.sig[k]] = "/"
                elif depth == 0 and word in ("VALUES", "VALUE") and verb in ("INSERT", "REPLACE"):
                    in_values = True
                    self.text[self.sig[k]] = "VALUES"
                elif depth == 0 and word == "SET" and verb == "UPDATE":
                    in_set = True
                elif depth == 0 and word in _CLAUSE_END:
                    in_set = False
                elif creating and depth == 1 and word in _TEXT_TYPES:
                    self._add_collation(k)
            if t.kind == "number" and "." in t.value and "e" not in t.value.lower():
                self._stored_decimal(k, in_values and depth >= 1, in_set and depth == 0)

    def _add_collation(self, k: int) -> None:
        """``name TEXT`` / ``name VARCHAR(20)`` in CREATE TABLE gets MySQL's default collation."""
        end = k
        if self._punct(k + 1, "("):
            end = k + 1
            while self.tok(end) is not None and not self._punct(end, ")"):
                end += 1
        following = self.tok(end + 1)
        if following is not None and following.is_word("COLLATE", "CHARACTER", "CHARSET"):
            return
        self.suffix[self.sig[end]] += f" COLLATE {COLLATION}"

    def _stored_decimal(self, k: int, in_values: bool, in_set: bool) -> None:
        sign_k = k - 1 if self._punct(k - 1, "-") else None
        before_k = (sign_k if sign_k is not None else k) - 1
        before = self.tok(before_k)
        after = self.tok(k + 1)
        after_text = after.value.upper() if after is not None else ""
        if in_values:
            ok = before is not None and before.value in ("(", ",") and after_text in (",", ")")
        elif in_set:
            ok = (
                before is not None
                and before.value == "="
                and self._is_assignment(before_k)
                and (after is None or after_text == "," or after_text in _CLAUSE_END)
            )
        else:
            ok = False
        if not ok:
            return
        literal = _decimal_text(self.tokens[self.sig[k]].value)
        if sign_k is not None:
            self.text[self.sig[sign_k]] = ""
            literal = "-" + literal
        self.text[self.sig[k]] = sqlite_string(literal)

    def _is_assignment(self, k: int) -> bool:
        """Is the ``=`` at significant index ``k`` an UPDATE … SET assignment?"""
        first = self.tok(0)
        if first is None or first.upper != "UPDATE":
            return False
        start = self._column_back(k - 1)
        if start is None:
            return False
        before = self.tok(start - 1)
        if before is None or not (before.is_word("SET") or before.value == ","):
            return False
        depth = 0
        for j in range(start - 1, -1, -1):
            t = self.tokens[self.sig[j]]
            if t.value == ")":
                depth += 1
            elif t.value == "(":
                depth -= 1
            elif depth == 0 and t.is_word("SET"):
                return True
            elif depth == 0 and t.kind == "word" and t.value.upper() in _CLAUSE_END:
                return False
        return False

    def _numeric_comparisons(self) -> None:
        """Compare a column with a number numerically (MySQL's string-to-number rule)."""
        wrapped: set[int] = set()

        def wrap(start: int, end: int) -> None:
            if start not in wrapped:
                wrapped.add(start)
                self._wrap(start, end)

        for k in range(len(self.sig)):
            t = self.tokens[self.sig[k]]
            if t.kind == "op" and t.value in _COMPARISONS:
                if t.value == "=" and self._is_assignment(k):
                    continue
                start = self._column_back(k - 1)
                if start is not None and self._number_at(k + 1):
                    wrap(start, k - 1)
                    continue
                end = self._column_forward(k + 1)
                if end is not None and self._number_before(k - 1):
                    wrap(k + 1, end)
            elif t.is_word("BETWEEN", "IN"):
                col_end = k - 2 if (self.tok(k - 1) or t).is_word("NOT") else k - 1
                start = self._column_back(col_end)
                if start is None:
                    continue
                between = t.is_word("BETWEEN") and self._number_at(k + 1)
                in_list = t.is_word("IN") and self._punct(k + 1, "(") and self._all_numbers(k + 2)
                if between or in_list:
                    wrap(start, col_end)

    def _all_numbers(self, k: int) -> bool:
        """Is the parenthesised list starting at ``k`` a list of numeric literals?"""
        seen = False
        while True:
            if not self._number_at(k):
                return False
            seen = True
            k += 2 if self._punct(k, "-") or self._punct(k, "+") else 1
            if self._punct(k, ")"):
                return seen
            if not self._punct(k, ","):
                return False
            k += 1
