"""Repair operators: parameterised, generic hook programs, and how several are merged into one patch.

An :class:`Operator` addresses some failure codes in some environments. Given parameters from its discrete
:meth:`~Operator.space` and an environment, :meth:`~Operator.fragments` returns, per hook point, one
:class:`Fragment`: a helper function ``def NAME(ctx, nb)`` that returns an effect in the hook's format or
``None``. :func:`merge` turns the fragments of 1–3 operators into one patch with at most one hook per hook
point: each hook's code is the (sorted, deduplicated) imports, the operators' helpers, and a ``hook`` that
calls every helper in operator order (so every helper's notebook bookkeeping runs) and combines the results:

- ``on_init``: skills concatenated (at most 5);
- ``before_decision``: messages joined;
- ``before_action``: the first effect wins (guards come first: operators are ordered by ``priority``);
- ``after_feedback``: the first ``force_action`` wins, otherwise the hints are joined.

**Ranges and conditions** (for the repair-program language, :mod:`reharness.engineer.program`). The teacher
samples parameters from the discrete :meth:`~Operator.space` only; a program may also use any value inside
an operator's :attr:`~Operator.ranges` (``resolve(..., strict=False)``), and :func:`merge` may gate an
operator's helpers with a condition (a Python boolean expression over ``ctx`` that the program compiler builds
from typed fields): the hook then calls ``(helper(ctx, nb) if CONDITION else None)``.

Operators read ``ctx`` fields only — never task ids, answers or object instances — so the generated code
passes the leakage check for any packet. Parameter values enter the code as Python literals (``repr``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from reharness.core.errors import ConfigError, did_you_mean
from reharness.envs.registry import find_kit
from reharness.patches.model import Patch
from reharness.runtime.effects import HOOK_POINTS, MAX_SKILLS, MAX_TEXT_CHARS

ParamSpace = dict[str, tuple[Any, ...]]
#: Most operators merged into one patch (each adds at most one helper per hook point; the limit is 5).
MAX_OPERATORS = 3


@dataclass(frozen=True)
class Fragment:
    """One operator's contribution to one hook point: ``code`` defines ``def function(ctx, nb)``."""

    function: str
    code: str
    imports: tuple[str, ...] = ()


def fill(template: str, code: Mapping[str, str] | None = None, **values: Any) -> str:
    """``template`` with ``<<NAME>>`` replaced by the code text ``code[NAME]`` (verbatim: optional lines of
    the program) and every ``<<name>>`` replaced by the Python literal of ``values[name]`` (``repr``).

    A placeholder left unfilled is not Python; it raises here rather than reaching static validation.
    """
    out = template
    for name, text in (code or {}).items():
        out = out.replace(f"<<{name}>>", text)
    for name, value in values.items():
        out = out.replace(f"<<{name}>>", repr(value))
    if "<<" in out:
        raise ValueError(f"unfilled placeholder in operator template: {out[out.index('<<') :][:40]!r}")
    return out


class Operator(ABC):
    """A parameterised, generic repair (see the module docstring)."""

    #: Stable name (used in proposals' metadata and by the CLI).
    name: str
    #: One line saying what the repair does.
    summary: str
    #: Failure codes (:class:`reharness.failures.FailureCode` values) the repair addresses.
    codes: tuple[str, ...]
    #: Environments the repair applies to (a kit's own operators); generic operators leave it empty.
    envs: tuple[str, ...] = ()
    #: Runtime signals (packet trace signals) that indicate the repair is needed.
    signals: tuple[str, ...] = ()
    #: Lower runs first inside a merged hook (guards before rewrites before hints).
    priority: int = 50
    #: Relevance multiplier in the engineer's score (below 1 for generic, evidence-agnostic repairs).
    weight: float = 1.0
    #: Numeric parameters a repair program may set to any value in ``[low, high]`` (ints stay ints), beyond
    #: the discrete :meth:`space` the teacher samples from.
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {}
    #: A generic repair (reads only the generic ``ctx``): it applies to every environment whose kit does not
    #: leave it out (``EnvKit.generic_operators``), tuned by the kit's ``operator_settings``.
    generic: ClassVar[bool] = False
    #: The repair direction a kit's operator belongs to (``pool/directions.yaml``); None for the shipped
    #: operators, whose directions are listed there.
    direction: ClassVar[str | None] = None

    @abstractmethod
    def space(self, env: str) -> ParamSpace:
        """The discrete parameter space in ``env``; the first value of each is the default."""

    @abstractmethod
    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        """Hook point → fragment for complete, checked ``params``."""

    def applies_to(self, env: str) -> bool:
        if not self.generic:
            return env in self.envs
        kit = find_kit(env)
        return kit is None or kit.generic_operators is None or self.name in kit.generic_operators

    def settings(self, env: str) -> Mapping[str, Any]:
        """What ``env``'s kit sets for this operator (``EnvKit.operator_settings``); empty by default."""
        kit = find_kit(env)
        return kit.operator_settings.get(self.name, {}) if kit is not None else {}

    def defaults(self, env: str) -> dict[str, Any]:
        return {key: values[0] for key, values in self.space(env).items()}

    def resolve(self, params: Mapping[str, Any] | None, env: str, strict: bool = True) -> dict[str, Any]:
        """``params`` completed with defaults; unknown names and values outside the space are errors.

        ``strict=False`` also accepts a numeric value inside the parameter's :attr:`ranges`."""
        if not self.applies_to(env):
            raise ConfigError(
                f"operator {self.name!r} does not apply to {env!r}",
                hint=f"it applies to: {', '.join(self.envs)}"
                if self.envs
                else f"the {env!r} kit leaves this generic operator out",
            )
        space = self.space(env)
        out = self.defaults(env)
        for key, value in (params or {}).items():
            if key not in space:
                raise ConfigError(
                    f"operator {self.name!r} has no parameter {key!r}", hint=did_you_mean(key, list(space))
                )
            if not (_in_space(value, space[key]) or (not strict and self._in_range(key, value))):
                allowed = ", ".join(repr(v) for v in space[key])
                if not strict and key in self.ranges:
                    low, high = self.ranges[key]
                    allowed += f", or a number in [{low:g}, {high:g}]"
                raise ConfigError(
                    f"operator {self.name!r}: {key}={value!r} is outside its space in {env!r}",
                    hint=f"use one of: {allowed}",
                )
            out[key] = value
        return out

    def _in_range(self, key: str, value: Any) -> bool:
        if key not in self.ranges or isinstance(value, bool) or not isinstance(value, int | float):
            return False
        low, high = self.ranges[key]
        integral = all(isinstance(v, int) for v in (low, high))
        return low <= value <= high and (isinstance(value, int) or not integral)

    def points(self, params: Mapping[str, Any] | None, env: str) -> tuple[str, ...]:
        found = self.fragments(self.resolve(params, env), env)
        return tuple(p for p in HOOK_POINTS if p in found)

    def variants(self, env: str) -> list[dict[str, Any]]:
        """Every parameter combination in ``env`` (the whole grid, in a stable order)."""
        grid: list[dict[str, Any]] = [{}]
        for key, values in self.space(env).items():
            grid = [{**g, key: v} for g in grid for v in values]
        return grid

    def describe(self, params: Mapping[str, Any]) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        return f"{self.summary}" + (f" ({shown})" if shown else "")

    def build(self, params: Mapping[str, Any] | None, env: str) -> Patch:
        """This operator alone as a patch for ``env``."""
        return merge([(self, dict(params or {}))], env)


def _combine(point: str, calls: Sequence[str]) -> str:
    """The ``hook`` of one point: it evaluates every call (a helper, maybe gated) and combines the effects."""
    if len(calls) == 1:
        return f"def hook(ctx, nb):\n    return {calls[0]}\n"
    joined = ", ".join(calls)
    head = f"def hook(ctx, nb):\n    outs = [{joined}]\n"
    if point == "on_init":
        return head + (
            "    skills = []\n"
            "    for out in outs:\n"
            "        if out:\n"
            "            skills.extend(out.get('skills') or [])\n"
            "    if not skills:\n"
            "        return None\n"
            f"    return {{'skills': skills[:{MAX_SKILLS}]}}\n"
        )
    if point == "before_action":
        return head + "    for out in outs:\n        if out:\n            return out\n    return None\n"
    messages = "[str(out.get('message') or '') for out in outs if out]"
    if point == "before_decision":
        return head + (
            f"    text = ' '.join(m for m in {messages} if m)\n"
            "    if not text:\n"
            "        return None\n"
            f"    return {{'message': text[:{MAX_TEXT_CHARS}]}}\n"
        )
    return head + (  # after_feedback
        "    for out in outs:\n"
        "        if out and out.get('type') == 'force_action':\n"
        "            return out\n"
        f"    text = ' '.join(m for m in {messages} if m)\n"
        "    if not text:\n"
        "        return None\n"
        f"    return {{'type': 'inject_hint', 'message': text[:{MAX_TEXT_CHARS}]}}\n"
    )


def merge(
    choices: Sequence[tuple[Operator, Mapping[str, Any]]],
    env: str,
    *,
    conditions: Mapping[str, tuple[str, str]] | None = None,
    strict: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Patch:
    """One patch from 1–:data:`MAX_OPERATORS` operators with their parameters (see the module docstring).

    ``conditions`` maps an operator name to ``(expression, text)``: a Python boolean expression over ``ctx``
    that gates its helpers (built by the program compiler from typed fields, never from free text) and the
    condition as the program wrote it (for the description); ``strict=False`` accepts values in the operators'
    :attr:`~Operator.ranges`; ``metadata`` is merged into the patch's metadata."""
    conditions = dict(conditions or {})
    if not 1 <= len(choices) <= MAX_OPERATORS:
        raise ConfigError(
            f"merge takes 1 to {MAX_OPERATORS} operators, got {len(choices)}", hint="pick fewer operators"
        )
    names = [op.name for op, _ in choices]
    if len(set(names)) != len(names):
        raise ConfigError(f"operator listed twice: {names}", hint="use each operator at most once")
    ordered = sorted(((op, op.resolve(params, env, strict)) for op, params in choices), key=_order)
    per_point: dict[str, list[Fragment]] = {}
    calls: dict[str, list[str]] = {}
    for op, params in ordered:
        for point, fragment in op.fragments(params, env).items():
            shared = per_point.setdefault(point, [])
            if all(f.function != fragment.function for f in shared):  # a helper two operators share, once
                shared.append(fragment)
                call = f"{fragment.function}(ctx, nb)"
                when = conditions.get(op.name)
                calls.setdefault(point, []).append(f"({call} if {when[0]} else None)" if when else call)
    hooks: dict[str, str] = {}
    for point in HOOK_POINTS:
        fragments = per_point.get(point)
        if not fragments:
            continue
        imports = sorted({name for f in fragments for name in f.imports})
        head = "".join(f"import {name}\n" for name in imports)
        body = "\n\n".join([f.code.strip() + "\n" for f in fragments] + [_combine(point, calls[point])])
        hooks[point] = (head + "\n\n" if head else "") + body
    description = " ".join(
        f"[{op.name}] {op.describe(params)}"
        + (f" if {conditions[op.name][1]}" if op.name in conditions else "")
        + "."
        for op, params in ordered
    )
    operators = [{"name": op.name, "params": json.loads(json.dumps(params))} for op, params in ordered]
    return Patch(
        hooks, description, env, {"engineer": "operators", "operators": operators, **(metadata or {})}
    )


def _in_space(value: Any, values: tuple[Any, ...]) -> bool:
    """``value`` is one of ``values`` with the same type (``True`` is not ``1``, ``1`` is not ``1.0``)."""
    return any(type(value) is type(v) and value == v for v in values)


def _order(item: tuple[Operator, dict[str, Any]]) -> tuple[int, str]:
    return item[0].priority, item[0].name
