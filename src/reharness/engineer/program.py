"""Repair programs: a compact reply language a tiny engineer can write, compiled by the host to hook code.

A free-form patch is ~860 tokens of exact, JSON-escaped hook code; a from-scratch engineer of 0.2M
parameters can only memorise such replies (docs/engineer-training.md). A **repair program** says the same
thing in a few dozen tokens — which repairs, with which parameters, under which conditions — and the host
compiles it with the repair operators' own code generation (:func:`~reharness.engineer.operators.merge`)
into an ordinary :class:`~reharness.patches.Patch`, validated and measured like any patch::

    <program>snap_to_admissible(cutoff=0.8, fallback=block); loop_breaker(mode=force) if step>=4</program>

Grammar (whitespace is free)::

    program   := term (";" term)* [";"]            -- 1 to MAX_TERMS terms, each operator at most once
    term      := NAME ["(" [arg ("," arg)*] ")"] ["if" condition]
    arg       := NAME "=" value                     -- omitted parameters take the operator's default
    condition := FIELD CMP value                    -- CMP: >= <= == != > <
    value     := NUMBER | true | false | NAME

``NAME`` is an operator or config knob of the environment (:func:`program_operators`); a parameter takes a
value of its discrete space or, for numeric parameters, any value in the operator's ``ranges`` — so a program
reaches repairs the ``operators`` teacher never proposes (other values, combinations, knobs, conditions).
``FIELD`` is a typed ``ctx`` field (:func:`condition_fields`: the common ones and the kit's); a condition
gates the term's hooks (the helper runs only when it holds). Patches record their language in
``metadata["language"]`` (:data:`PROGRAM_LANGUAGE` with the canonical ``program`` text, or
:data:`HOOK_LANGUAGE`). A malformed program raises :class:`~reharness.patches.errors.PatchFormatError`
with a stable code (``program_syntax``, ``unknown_operator``, ``bad_param``, ``bad_condition``,
``too_many_terms``, ``duplicate_operator``, ``empty_program``) — an engineer's reply with one is an
invalid proposal, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.errors import ConfigError, did_you_mean
from reharness.envs.registry import BUILTIN_KITS, find_kit
from reharness.patches.documents import format_error
from reharness.patches.errors import PatchFormatError

if TYPE_CHECKING:
    from reharness.engineer.operators.base import Operator
    from reharness.patches.model import Patch

PROGRAM_LANGUAGE = "repair-program-v1"
HOOK_LANGUAGE = "hook-code"
MAX_TERMS = 3
MAX_PROGRAM_CHARS = 600
SOURCE = "<program>"
Value = int | float | bool | str
Comparator = Literal[">=", "<=", "==", "!=", ">", "<"]
FieldKind = Literal["int", "bool", "str"]
_COMMON: dict[str, FieldKind] = {
    "step": "int",
    "remaining_steps": "int",
    "counters.repeated_action": "int",
    "counters.invalid_streak": "int",
    "counters.invalid_count": "int",
    "counters.format_error_streak": "int",
    "counters.blocked_count": "int",
    "counters.noop_count": "int",
    "task.task_type": "str",
}


def condition_fields(env: str) -> dict[str, FieldKind] | None:
    """The ``ctx`` fields a condition may test in ``env``, with their kind (strings: ``==``/``!=`` only): the
    common ones plus its kit's ``ctx_fields``; None where the language does not apply (a kit that leaves
    every generic operator out and lists no ctx fields)."""
    kit = find_kit(env)
    if kit is None:
        return None
    if not kit.ctx_fields and kit.generic_operators is not None and not kit.generic_operators:
        return None
    return _COMMON | {k: cast(FieldKind, v) for k, v in kit.ctx_fields.items()}


def _fields(env: str) -> dict[str, FieldKind]:
    fields = condition_fields(env)
    if fields is None:
        able = [name for name in BUILTIN_KITS if condition_fields(name) is not None]
        raise _error(
            f"the repair-program language does not apply to {env!r}",
            f"use one of {', '.join(able)}, or give its kit ctx_fields",
            "unknown_env",
        )
    return fields


_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<cmp>>=|<=|==|!=|>|<)|(?P<punct>[(),;=]))"
)
_TAG = re.compile(r"<program>(.*?)</program>", re.IGNORECASE | re.DOTALL)


class Condition(BaseModel):
    """``field op value``: the term's hooks run only when it holds for the current ``ctx``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    op: Comparator
    value: Value

    def text(self) -> str:
        return f"{self.field}{self.op}{_literal(self.value)}"

    def expression(self) -> str:
        """The Python expression over ``ctx`` that the compiled hook evaluates."""
        parts = self.field.split(".")
        expr = f"ctx.get({parts[0]!r})"
        for part in parts[1:]:
            expr = f"({expr} or {{}}).get({part!r})"
        if isinstance(self.value, bool):
            return f"(bool({expr}) {self.op} {self.value!r})"
        if isinstance(self.value, str):
            return f"(str({expr} or '') {self.op} {self.value!r})"
        return f"(({expr} or 0) {self.op} {self.value!r})"


class Term(BaseModel):
    """One repair: an operator (or config knob), its parameters and an optional condition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operator: str
    params: dict[str, Value] = Field(default_factory=dict)
    when: Condition | None = None

    def text(self) -> str:
        args = ", ".join(f"{k}={_literal(v)}" for k, v in self.params.items())
        return f"{self.operator}({args})" + (f" if {self.when.text()}" if self.when else "")


class RepairProgram(BaseModel):
    """A parsed, checked repair program for one environment (``text()`` is its canonical form)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    terms: list[Term] = Field(min_length=1, max_length=MAX_TERMS)

    def text(self) -> str:
        return "; ".join(term.text() for term in self.terms)


def _literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _error(problem: str, fix: str, code: str) -> PatchFormatError:
    return format_error(SOURCE, None, problem, fix, code)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, position)`` of every token; an unknown character is a ``program_syntax`` error."""
    out, pos, end = [], 0, len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            bad = text[pos:].lstrip()[:1]
            fix = "write terms like name(param=value) if field>=N, separated by ';'"
            raise _error(f"unexpected character {bad!r} at position {pos}", fix, "program_syntax")
        kind = match.lastgroup or "punct"
        out.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    return out


class _Parser:
    """Recursive-descent parser of the grammar in the module docstring (one pass, positions in errors)."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, kind: str, what: str, text: str | None = None) -> str:
        token = self.peek()
        if token is None or token[0] != kind or (text is not None and token[1] != text):
            found = f"{token[1]!r} at position {token[2]}" if token else "the end of the program"
            raise _error(
                f"expected {what}, found {found}",
                "see the grammar: name(param=value) if field>=N",
                "program_syntax",
            )
        self.i += 1
        return token[1]

    def at(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token[1] == text and token[0] in ("punct", "cmp", "name")

    def value(self) -> Value:
        token = self.peek()
        if token is None or token[0] not in ("num", "name"):
            return self.take("num", "a value (number, true, false or a name)")
        self.i += 1
        if token[0] == "num":
            return float(token[1]) if "." in token[1] else int(token[1])
        return {"true": True, "false": False}.get(token[1], token[1])

    def term(self) -> tuple[str, dict[str, Value], tuple[str, str, Value] | None]:
        name = self.take("name", "an operator name")
        params: dict[str, Value] = {}
        if self.at("("):
            self.i += 1
            while not self.at(")"):
                key = self.take("name", "a parameter name")
                if key in params:
                    raise _error(f"parameter {key!r} of {name} given twice", "give each once", "bad_param")
                self.take("punct", "'='", "=")
                params[key] = self.value()
                if not self.at(","):
                    break
                self.i += 1
            self.take("punct", "')'", ")")
        condition = None
        if self.at("if"):
            self.i += 1
            field = self.take("name", "a ctx field after 'if'")
            op = self.take("cmp", "a comparison (>=, <=, ==, !=, >, <)")
            condition = (field, op, self.value())
        return name, params, condition

    def program(self) -> list[tuple[str, dict[str, Value], tuple[str, str, Value] | None]]:
        terms = []
        while self.peek() is not None:
            terms.append(self.term())
            if self.peek() is None:
                break
            self.take("punct", "';' between terms", ";")
        return terms


def _check_condition(env: str, field: str, op: str, value: Value) -> Condition:
    fields = _fields(env)
    if field not in fields:
        fix = did_you_mean(field, list(fields))
        raise _error(f"condition on unknown ctx field {field!r} in {env!r}", fix, "bad_condition")
    kind = fields[field]
    ok = {
        "int": isinstance(value, int | float) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
    }
    ok["str"] = isinstance(value, str)
    if not ok[kind]:
        raise _error(
            f"{field} is {kind}, compared with {_literal(value)!r}",
            f"compare it with a {kind}",
            "bad_condition",
        )
    if kind != "int" and op not in ("==", "!="):
        raise _error(f"{field} is {kind}: only == and != apply", "use == or !=", "bad_condition")
    return Condition(field=field, op=op, value=value)  # type: ignore[arg-type]


def _coerce(op: Operator, key: str, value: Value, env: str) -> Value:
    """A float parameter written as an integer (``cutoff=1``) is that float; everything else is as written."""
    space = op.space(env).get(key, ())
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and space
        and all(type(v) is float for v in space)
    ):
        return float(value)
    return value


def parse_program(text: str, env: str) -> RepairProgram:
    """Parse and check a repair program for ``env`` (operators, parameters, fields); errors name the fix."""
    from reharness.engineer.operators.registry import KNOBS, program_operators, shipped_operators

    if not isinstance(text, str) or not text.strip():
        raise _error(
            "the program is empty", "write at least one repair, e.g. loop_breaker()", "empty_program"
        )
    if len(text) > MAX_PROGRAM_CHARS:
        raise _error(
            f"the program has {len(text)} characters", f"keep it under {MAX_PROGRAM_CHARS}", "program_syntax"
        )
    _fields(env)
    parsed = _Parser(text).program()
    if not parsed:
        raise _error("the program is empty", "write at least one repair", "empty_program")
    if len(parsed) > MAX_TERMS:
        raise _error(
            f"{len(parsed)} repairs; at most {MAX_TERMS}", "keep the most important ones", "too_many_terms"
        )
    allowed = {op.name: op for op in program_operators(env)}
    terms: list[tuple[int, str, Term]] = []
    seen: set[str] = set()
    for name, params, condition in parsed:
        if name not in allowed:
            known = name in {op.name for op in shipped_operators() + KNOBS}
            problem = f"repair {name!r} does not apply to {env!r}" if known else f"unknown repair {name!r}"
            raise _error(problem, did_you_mean(name, list(allowed)), "unknown_operator")
        if name in seen:
            raise _error(f"repair {name!r} used twice", "use each repair at most once", "duplicate_operator")
        seen.add(name)
        op = allowed[name]
        values = {k: _coerce(op, k, v, env) for k, v in params.items()}
        try:
            resolved = op.resolve(values, env, strict=False)
        except ConfigError as exc:
            raise _error(exc.message, exc.hint or "", "bad_param") from None
        when = _check_condition(env, *condition) if condition else None
        terms.append((op.priority, name, Term(operator=name, params=resolved, when=when)))
    return RepairProgram(env=env, terms=[t for _, _, t in sorted(terms, key=lambda x: x[:2])])


def compile_program(program: RepairProgram) -> Patch:
    """The patch of a checked program: the operators' merged hooks, gated by the terms' conditions."""
    from reharness.engineer.operators.base import merge
    from reharness.engineer.operators.registry import get_operator

    choices = [(get_operator(t.operator, program.env), dict(t.params)) for t in program.terms]
    conditions = {t.operator: (t.when.expression(), t.when.text()) for t in program.terms if t.when}
    meta = {"language": PROGRAM_LANGUAGE, "program": program.text()}
    try:
        return merge(choices, program.env, conditions=conditions, strict=False, metadata=meta)
    except ConfigError as exc:  # parse_program checked everything merge checks; kept as a clear error
        raise _error(exc.message, exc.hint or "", "bad_param") from None


def program_patch(text: str, env: str) -> Patch:
    """Parse, check and compile a program text into a patch for ``env``.

    Every failure is a :class:`PatchFormatError` (an operator bug becomes ``program_error``), so a reply
    with a bad program is an invalid proposal, never a crash of the loop that scores it."""
    try:
        return compile_program(parse_program(text, env))
    except PatchFormatError:
        raise
    except Exception as exc:
        raise _error(
            f"the program could not be compiled ({type(exc).__name__}: {exc})", "", "program_error"
        ) from None


def render_program(choices: Sequence[tuple[Operator, Mapping[str, Any]]], env: str) -> str:
    """The canonical program of an operator choice (every parameter, in space order; no conditions)."""
    ordered = sorted(choices, key=lambda c: (c[0].priority, c[0].name))
    terms = [Term(operator=op.name, params=op.resolve(params, env, strict=False)) for op, params in ordered]
    return RepairProgram(env=env, terms=terms).text()


def program_reply(text: str) -> str:
    """An engineer reply in the program language (no thinking: the program is the whole answer)."""
    return f"<program>{text.strip()}</program>"


def program_text(reply: str) -> str | None:
    """The program of a reply (the last ``<program>`` block after the thinking), or ``None`` if it has none.

    A ``<program>`` without ``</program>`` (a truncated reply) is a ``program_syntax`` error."""
    from reharness.patches.reply import after_thinking

    answer = after_thinking(reply)
    if "<program>" not in answer.lower():
        return None
    found = _TAG.findall(answer)
    if not found or answer.lower().rfind("<program>") > answer.lower().rfind("</program>"):
        raise _error("<program> is never closed", "close it: <program>...</program>", "program_syntax")
    return str(found[-1]).strip()


def vocabulary() -> list[str]:
    """The language's words that a tiny engineer's tokenizer keeps whole (one token each): the tags, every
    repair name, every ``param=`` and every dotted condition field. A 0.1M-parameter engineer then writes a
    repair in a handful of tokens instead of spelling ``snap_to_admissible`` piece by piece (measured: it
    dropped or repeated ``_to``-style pieces)."""
    from reharness.engineer.operators.registry import KNOBS, shipped_operators

    words = ["<program>", "</program>"]
    for op in shipped_operators() + KNOBS:
        words.append(op.name)
        for env in [name for name in BUILTIN_KITS if op.applies_to(name)]:
            words += [f"{key}=" for key in op.space(env)]
    for env in BUILTIN_KITS:
        words += [f for f in condition_fields(env) or {} if "." in f or "_" in f]
    return list(dict.fromkeys(words))


def language_help(env: str) -> str:
    """The program language for ``env`` in a few lines: grammar, repairs with their spaces, fields."""
    from reharness.engineer.operators.registry import program_operators

    lines = [
        "Reply <program>repair(param=value, ...) [if field>=N]; ...</program> with 1 to "
        f"{MAX_TERMS} repairs. Repairs:"
    ]
    for op in program_operators(env):
        space = ", ".join(f"{k}={'|'.join(_literal(v) for v in vs)}" for k, vs in op.space(env).items())
        lines.append(f"- {op.name}({space})")
    lines.append("Condition fields: " + ", ".join(_fields(env)) + ".")
    return "\n".join(lines)
