"""Can a partial reply still become a valid repair program? — the test behind constrained decoding.

:func:`program_constraint` gives a model backend a predicate over the reply decoded so far: ``viable(text,
final)`` is false as soon as no continuation of ``text`` can parse as a repair program for the environment
(:mod:`reharness.engineer.program`). It checks what a tiny engineer actually gets wrong: an unknown or
repeated repair, a parameter that belongs to another repair or is given twice, an unknown ``ctx`` field, a
token out of place, more than ``MAX_TERMS`` terms. A finished reply (``final``, or a closed ``</program>``
tag) must parse completely (values included). The backend masks a token whose text makes the reply
non-viable and draws again, so the engineer writes the grammar by construction
(:meth:`reharness.models.hf_backend.HFBackend`; ``ChatRequest.constraint``).

Written by hand: the grammar is ours and tiny, and a general grammar engine (outlines, xgrammar) would add a
heavy dependency and a tokenizer-specific compilation step for a few dozen lines of checking.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from reharness.core.errors import ReharnessError
from reharness.engineer.operators.base import _in_space
from reharness.engineer.program import (
    _TOKEN,
    MAX_PROGRAM_CHARS,
    MAX_TERMS,
    _coerce,
    condition_fields,
    parse_program,
)

if TYPE_CHECKING:
    from reharness.engineer.operators.base import Operator

OPEN, CLOSE = "<program>", "</program>"
_LONG_SPACE = re.compile(r"\s{3,}")
_ODD_SPACE = re.compile(r"[^\S \n\t]")  # whitespace other than a blank, a newline or a tab (\r, \x1d, …)
MAX_NUMBER_CHARS = 6  # the longest numeric literal the operators' spaces and ranges need ("0.8125")
MAX_NAME_CHARS = 40  # the longest name a condition compares a str field with
_PARTIAL = re.compile(r"^[-!]$")  # the start of a negative number or of "!="
#: inside a call's parentheses the only blank is one space between tokens (``fallback=block, cutoff=0.7``):
#: a sampled reply could otherwise spend its budget on blanks inside an unfinished call
_CALL_BLANKS = re.compile(r"\s\s|[^ \S]")


@lru_cache(maxsize=8)
def _grammar(env: str) -> tuple[dict[str, Operator], dict[str, str]]:
    """Repair name → operator, and condition field → its kind (int, bool, str), for ``env``."""
    from reharness.engineer.operators.registry import program_operators

    return {op.name: op for op in program_operators(env)}, dict(condition_fields(env) or {})


def _literal_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _value_ok(op: Operator, key: str, kind: str, text: str, partial: bool, env: str) -> bool:
    """Whether a parameter value (token ``kind``/``text``; ``partial``: more characters may follow) is,
    or can still become, a value the operator accepts for ``key``."""
    space = op.space(env).get(key, ())
    if kind == "name":
        names = [_literal_text(v) for v in space if isinstance(v, str | bool)]
        return any(n.startswith(text) for n in names) if partial else text in names
    if kind != "num":
        return False
    if partial:  # digits only add magnitude: the integer part must still fit under the largest value
        numbers = [v for v in space if isinstance(v, int | float) and not isinstance(v, bool)]
        numbers += list(op.ranges.get(key, ()))
        if text.startswith("-") and not any(v < 0 for v in numbers):  # a sign no allowed value has
            return False
        whole = text.lstrip("-").split(".")[0] or "0"
        if all(isinstance(v, int) for v in numbers):  # an integer: some allowed value must start so
            allowed = {v for v in space if isinstance(v, int) and not isinstance(v, bool)}
            if key in op.ranges:
                low, high = op.ranges[key]
                allowed |= set(range(int(low), int(high) + 1))
            return any(str(v).startswith(text) for v in allowed)
        return bool(numbers) and len(text) <= MAX_NUMBER_CHARS and int(whole) <= max(map(abs, numbers))
    value: object = float(text) if "." in text else int(text)
    value = _coerce(op, key, value, env)  # type: ignore[arg-type]
    return _in_space(value, space) or op._in_range(key, value)


def _name_step(kind: str, text: str, names: set[str], partial: bool) -> bool | None:
    """A token that must be one of ``names`` (a repair, a parameter, a ctx field): the verdict on the whole
    reply when it settles it — False if the token cannot be (or become) one, True if it ends the reply
    and can still grow into one — or None when it is one of them and the check goes on."""
    if kind != "name":
        return False
    if partial:
        return any(name.startswith(text) for name in names)
    return None if text in names else False


def _cond_value_ok(field_kind: str, kind: str, text: str, partial: bool) -> bool:
    """Whether a condition's value token fits its field's kind (and stays short: a value that could grow
    without end would let a sampled reply run to its token budget)."""
    if field_kind == "int":
        return kind == "num" and len(text) <= MAX_NUMBER_CHARS
    if kind != "name" or len(text) > MAX_NAME_CHARS:
        return False
    if field_kind == "bool":
        return any(b.startswith(text) for b in ("true", "false")) if partial else text in ("true", "false")
    return True


def _parses(body: str, env: str) -> bool:
    try:
        parse_program(body, env)
    except ReharnessError:
        return False
    return True


def _call_blanks_ok(body: str) -> bool:
    """Whether every call's parentheses (closed or still open) hold at most one plain blank in a row."""
    for start in (m.end() for m in re.finditer(r"\(", body)):
        close = body.find(")", start)
        if _CALL_BLANKS.search(body[start : close if close >= 0 else len(body)]):
            return False
    return True


def _prefix_ok(body: str, env: str) -> bool:
    """Whether the unfinished program ``body`` (no closing tag yet) has a valid continuation."""
    if not _call_blanks_ok(body):
        return False
    repairs, fields = _grammar(env)
    tokens: list[tuple[str, str]] = []
    pos, end, dangling = 0, len(body), ""
    while pos < end:
        match = _TOKEN.match(body, pos)
        if match is None or match.end() == pos:
            rest = body[pos:]
            if not rest.strip():
                break
            dangling = rest.lstrip()  # must be the very end: no character may follow it
            decimal = (  # the "0." of 0.75: a dangling point right after a number without one
                dangling == "."
                and rest == "."
                and bool(tokens)
                and tokens[-1][0] == "num"
                and "." not in tokens[-1][1]
                and body[pos - 1].isdigit()
            )
            if not (decimal or _PARTIAL.match(dangling)):
                return False
            if decimal:  # the number goes on: check it with its point
                tokens[-1], dangling = ("num", tokens[-1][1] + "."), ""
            break  # an unfinished number or comparison: checked against the state below
        kind = match.lastgroup or "punct"
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    # the last token may still grow only if it ends the body (nothing dangles after it)
    open_end = (
        not dangling
        and bool(body)
        and not body[-1].isspace()
        and bool(tokens)
        and tokens[-1][0] in ("name", "num")
    )
    used: set[str] = set()
    given: set[str] = set()
    state, terms, repair, key, cond_field = "term", 0, "", "", ""
    for index, (kind, text) in enumerate(tokens):
        partial = open_end and index == len(tokens) - 1
        if state == "term":
            verdict = _name_step(kind, text, set(repairs) - used if terms < MAX_TERMS else set(), partial)
            if verdict is not None:
                return verdict
            used.add(text)
            repair, given, terms, state = text, set(), terms + 1, "after_name"
        elif state in ("after_name", "after_params"):
            if text == "(" and state == "after_name":
                state = "key"
            elif text == "if" and kind == "name":
                state = "field"
            elif partial and kind == "name" and "if".startswith(text):
                return True
            elif text == ";":
                state = "term"
            else:
                return False
        elif state == "key":
            if text == ")":
                state = "after_params"
                continue
            verdict = _name_step(kind, text, set(repairs[repair].space(env)) - given, partial)
            if verdict is not None:
                return verdict
            given.add(text)
            key, state = text, "eq"
        elif state == "eq":
            if text != "=":
                return False
            state = "value"
        elif state == "value":
            if not _value_ok(repairs[repair], key, kind, text, partial, env):
                return False
            state = "after_value"
        elif state == "after_value":
            if text == ",":
                state = "key"
            elif text == ")":
                state = "after_params"
            else:
                return False
        elif state == "field":
            verdict = _name_step(kind, text, set(fields), partial)
            if verdict is not None:
                return verdict
            cond_field, state = text, "cmp"
        elif state == "cmp":
            if kind != "cmp":
                return False
            state = "cond_value"
        elif state == "cond_value":
            if not _cond_value_ok(fields[cond_field], kind, text, partial):
                return False
            state = "after_cond"
        elif state == "after_cond":
            if text != ";":
                return False
            state = "term"
    allowed = {"-": ("value", "cond_value"), "!": ("cmp",)}
    if dangling == "-" and state == "value":  # a negative number: only where the parameter allows one
        return _value_ok(repairs[repair], key, "num", "-", True, env)
    return not dangling or state in allowed.get(dangling, ())


def viable_program_reply(text: str, env: str, final: bool = False) -> bool:
    """Whether ``text`` (a reply decoded so far) can still end as a reply with a valid program for ``env``;
    ``final``: the reply ends here, so its program must be complete and valid."""
    if _LONG_SPACE.search(text) or _ODD_SPACE.search(text):  # at most two plain blanks between tokens
        return False
    head = text.lstrip()
    if not head.startswith(OPEN):
        return not final and OPEN.startswith(head)
    body = head[len(OPEN) :]
    if CLOSE in body:  # nothing but the end of the reply may follow the closing tag
        program, after = body.split(CLOSE, 1)
        return not after and _parses(program, env)
    if final:
        return False
    # a trailing prefix of the closing tag: what comes before it must already be a whole program
    cut = body.rfind("<")
    if cut >= 0 and CLOSE.startswith(body[cut:]) and len(body[cut:]) >= 2:
        return _parses(body[:cut], env)
    if cut >= 0 and body[cut:] == "<" and _parses(body[:cut], env):
        return True  # the start of </program> (or of a comparison, checked next)
    if len(body) > MAX_PROGRAM_CHARS:  # the parser refuses a longer program
        return False
    return _prefix_ok(body, env)


def program_constraint(env: str) -> Callable[[str, bool], bool]:
    """The ``ChatRequest.constraint`` of a repair-program reply in ``env``."""

    def viable(text: str, final: bool) -> bool:
        return viable_program_reply(text, env, final)

    viable.__qualname__ = f"program_constraint({env!r})"
    return viable
