"""A small MySQL-flavoured SQL tokenizer (the first stage of the MySQL layer on SQLite).

DBBench agents write MySQL: ``"..."`` and ``'...'`` are string literals with backslash escapes (``\\'``,
``\\\\``, ``\\n``…), identifiers may be quoted with backticks or start with a digit
(``1952_British_GP``), and ``#`` starts a comment. SQLite reads several of these differently, so
:mod:`.dialect` rewrites the token stream before SQLite sees it. The tokenizer is iterative; the only input it
rejects is an unterminated quote, reported as :class:`SqlSyntaxError` (an error observation, never a crash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class SqlSyntaxError(ValueError):
    """The agent's SQL cannot be tokenized (the message is shown to the agent)."""


@dataclass(frozen=True)
class Token:
    """One token. ``kind`` is ws, comment, string, ident (quoted identifier), word, number, op or punct.

    ``value`` is the decoded content for strings and quoted identifiers, the raw text otherwise.
    """

    kind: str
    text: str
    value: str

    @property
    def upper(self) -> str:
        return self.value.upper() if self.kind == "word" else ""

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.value.upper() in words


_MYSQL_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENT_CHAR = re.compile(r"[0-9A-Za-z_$\u0080-\U0010ffff]")
_WORD = re.compile(r"[0-9A-Za-z_$\u0080-\U0010ffff]+")
_WS = re.compile(r"\s+")
_OPERATORS = ("<=>", "->>", "<>", "!=", "<=", ">=", "||", "&&", "<<", ">>", ":=", "->")


def _read_quoted(sql: str, start: int, quote: str, backslash: bool) -> tuple[str, int]:
    """Decode a quoted literal starting at ``start`` (the opening quote); return (value, end index)."""
    out: list[str] = []
    i = start + 1
    n = len(sql)
    while i < n:
        ch = sql[i]
        if backslash and ch == "\\" and i + 1 < n:
            nxt = sql[i + 1]
            # MySQL keeps the backslash before % and _ so that LIKE still sees an escaped wildcard.
            out.append("\\" + nxt if nxt in "%_" else _MYSQL_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if ch == quote:
            if i + 1 < n and sql[i + 1] == quote:
                out.append(quote)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    shown = sql[start : start + 40]
    raise SqlSyntaxError(f"unrecognized token: {shown!r} (unterminated quoted text)")


def tokenize(sql: str) -> list[Token]:
    """Split MySQL text into tokens (comments and whitespace kept as tokens)."""
    tokens: list[Token] = []
    i = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            m = _WS.match(sql, i)
            assert m is not None
            tokens.append(Token("ws", m.group(), m.group()))
            i = m.end()
        elif ch == "#" or (sql.startswith("--", i) and (i + 2 >= n or sql[i + 2].isspace())):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            tokens.append(Token("comment", sql[i:end], ""))
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            tokens.append(Token("comment", sql[i:end], ""))
            i = end
        elif ch in "'\"":
            value, end = _read_quoted(sql, i, ch, backslash=True)
            tokens.append(Token("string", sql[i:end], value))
            i = end
        elif ch == "`":
            value, end = _read_quoted(sql, i, "`", backslash=False)
            tokens.append(Token("ident", sql[i:end], value))
            i = end
        elif ch == "[":
            end = sql.find("]", i + 1)
            if end < 0:
                raise SqlSyntaxError(f"unrecognized token: {sql[i : i + 40]!r} (unterminated [identifier])")
            tokens.append(Token("ident", sql[i : end + 1], sql[i + 1 : end]))
            i = end + 1
        elif ch.isdigit() or (ch == "." and i + 1 < n and sql[i + 1].isdigit()):
            m = _NUMBER.match(sql, i)
            assert m is not None
            end = m.end()
            if ch != "." and end < n and _IDENT_CHAR.match(sql[end]) and "." not in m.group():
                # MySQL identifiers may start with a digit (1952_British_Grand_Prix_0, 2nd_leg).
                w = _WORD.match(sql, i)
                assert w is not None
                tokens.append(Token("word", w.group(), w.group()))
                i = w.end()
            else:
                tokens.append(Token("number", m.group(), m.group()))
                i = end
        elif _IDENT_CHAR.match(ch):
            m = _WORD.match(sql, i)
            assert m is not None
            tokens.append(Token("word", m.group(), m.group()))
            i = m.end()
        else:
            for op in _OPERATORS:
                if sql.startswith(op, i):
                    tokens.append(Token("op", op, op))
                    i += len(op)
                    break
            else:
                kind = "op" if ch in "=<>!+-*/%&|^~" else "punct"
                tokens.append(Token(kind, ch, ch))
                i += 1
    return tokens


def quote_ident(name: str) -> str:
    """Quote an identifier for SQLite (and MySQL): backticks, inner backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def sqlite_string(value: str) -> str:
    """A SQLite string literal for ``value`` (single quotes doubled; no backslash escapes)."""
    return "'" + value.replace("'", "''") + "'"


def mysql_string(value: str) -> str:
    """A MySQL string literal for ``value`` that this layer reads back unchanged (quotes and backslashes)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def starts_with_digit_identifier(word: str) -> bool:
    """True for words such as ``1952_British_Grand_Prix_0`` that SQLite cannot read unquoted."""
    return bool(word) and word[0].isdigit()
