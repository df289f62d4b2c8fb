"""Engineer specs → engineers: the registry :data:`ENGINEERS` and :func:`make_engineer` (``operators``,
``operators+lenient``, ``self-refine``, ``llm:BACKEND``, ``hf:PATH``).

The factory lives one level above the implementations it builds (they import :mod:`.base`, this module
imports them lazily), so the interface never imports its implementations. Help texts list the specs from
:data:`ENGINEERS` (``ENGINEERS.describe()``), so they list what :func:`make_engineer` accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reharness.core.errors import ReharnessError, UnknownNameError
from reharness.core.registry import Registry
from reharness.engineer.base import Engineer


def _operators(backend: str, options: dict[str, Any]) -> Engineer:
    from reharness.engineer.operators import OperatorEngineer

    if backend == "lenient":  # opt-in: the repairs of replies that yield no action (pretrained targets)
        from reharness.engineer.operators.registry import LENIENT

        options.setdefault("extra", LENIENT)
    return OperatorEngineer(**options)


def _self_refine(backend: str, options: dict[str, Any]) -> Engineer:
    from reharness.engineer.self_refine import SelfRefineEngineer

    return SelfRefineEngineer(**options)


def _llm(backend: str, options: dict[str, Any]) -> Engineer:
    from reharness.engineer.llm import LLMEngineer

    return LLMEngineer(backend, **options)


@dataclass(frozen=True)
class EngineerKind:
    """One engineer spec: its kind (``operators``, ``self-refine``, ``llm``), how to build it from a backend
    spec and options, and where the backend spec comes from (``backend`` fixed, or the spec's argument after
    ``backend_prefix``: ``hf:PATH`` is the ``llm`` backend ``hf:PATH``)."""

    kind: str
    build: Callable[[str, dict[str, Any]], Engineer]
    backend: str = ""
    backend_prefix: str = ""

    def backend_of(self, argument: str) -> str:
        return self.backend or self.backend_prefix + argument


#: The engineer specs; ``llm:`` and ``hf:`` take a model backend spec.
ENGINEERS: Registry[EngineerKind] = Registry("engineer", hint="llm:BACKEND takes a model spec")
ENGINEERS.add("operators", EngineerKind("operators", _operators))
ENGINEERS.add("operators+lenient", EngineerKind("operators", _operators, backend="lenient"))
ENGINEERS.add("self-refine", EngineerKind("self-refine", _self_refine), aliases=("self_refine", "selfrefine"))
ENGINEERS.add("llm:", EngineerKind("llm", _llm), metavar="llm:BACKEND", prefix=True)
ENGINEERS.add("hf:", EngineerKind("llm", _llm, backend_prefix="hf:"), metavar="hf:PATH", prefix=True)
#: The specs as help texts show them (``llm:BACKEND``).
ENGINEER_SPECS: tuple[str, ...] = ENGINEERS.shown()


def make_engineer(spec: str, **options: Any) -> Engineer:
    """The engineer named by ``spec``: ``operators`` (``operators+lenient``: with the lenient operators of
    :mod:`reharness.engineer.operators.lenient`), ``self-refine`` or ``llm:BACKEND_SPEC``
    (``llm:openai:MODEL@URL``, ``llm:tiny:NAME``, ``llm:hf:PATH``; ``hf:PATH`` is short for ``llm:hf:PATH``,
    e.g. an engineer trained by ``reharness train engineer``); ``options`` go to its constructor."""
    entry, backend = _resolve(spec)
    return entry.build(backend, options)


def check_engineer_spec(spec: str) -> tuple[str, str]:
    """``(kind, backend spec)`` of an engineer spec (kind ``operators``, ``self-refine`` or ``llm``), or the
    error :func:`make_engineer` would raise — without building or loading anything, so that a bad spec
    fails before any baseline runs or any file is written."""
    entry, backend = _resolve(spec)
    return entry.kind, backend


def _resolve(spec: str) -> tuple[EngineerKind, str]:
    name = spec.strip()
    if name in ("llm", "llm:"):
        raise UnknownNameError(
            f"engineer spec {spec!r} names no model backend",
            hint="write llm:BACKEND, e.g. llm:openai:gpt-4o@http://127.0.0.1:8000/v1 or llm:tiny:ENV-SIZE",
        )
    _, entry, argument = ENGINEERS.resolve(name)
    backend = entry.backend_of(argument)
    if entry.kind == "llm":
        from reharness.models.registry import check_spec

        try:
            check_spec(backend)
        except ReharnessError as exc:
            raise type(exc)(f"engineer {spec!r}: {exc.message}", hint=exc.hint) from None
    return entry, backend
