"""Engineer specs → engineers: :func:`make_engineer` (``operators``, ``self-refine``, ``llm:BACKEND``,
``hf:PATH``).

The factory lives one level above the implementations it builds (they import :mod:`.base`, this module
imports them lazily), so the interface never imports its implementations.
"""

from __future__ import annotations

from typing import Any

from reharness.core.errors import ReharnessError, UnknownNameError, did_you_mean
from reharness.engineer.base import Engineer


def make_engineer(spec: str, **options: Any) -> Engineer:
    """The engineer named by ``spec``: ``operators`` (``operators+lenient``: with the lenient operators of
    :mod:`reharness.engineer.operators.lenient`), ``self-refine`` or ``llm:BACKEND_SPEC``
    (``llm:openai:MODEL@URL``, ``llm:tiny:NAME``, ``llm:hf:PATH``; ``hf:PATH`` is short for ``llm:hf:PATH``,
    e.g. an engineer trained by ``reharness train engineer``); ``options`` go to its constructor."""
    kind, backend = check_engineer_spec(spec)
    if kind == "operators":
        from reharness.engineer.operators import OperatorEngineer

        if backend == "lenient":  # opt-in: the repairs of replies that yield no action (pretrained targets)
            from reharness.engineer.operators.registry import LENIENT

            options.setdefault("extra", LENIENT)
        return OperatorEngineer(**options)
    if kind == "self-refine":
        from reharness.engineer.self_refine import SelfRefineEngineer

        return SelfRefineEngineer(**options)
    from reharness.engineer.llm import LLMEngineer

    return LLMEngineer(backend, **options)


def check_engineer_spec(spec: str) -> tuple[str, str]:
    """``(kind, backend spec)`` of an engineer spec (kind ``operators``, ``self-refine`` or ``llm``), or the
    error :func:`make_engineer` would raise — without building or loading anything, so that a bad spec
    fails before any baseline runs or any file is written."""
    name = spec.strip()
    if name.startswith("hf:") and name[3:].strip():
        name = "llm:" + name
    if name == "operators":
        return "operators", ""
    if name == "operators+lenient":
        return "operators", "lenient"
    if name in ("self-refine", "self_refine", "selfrefine"):
        return "self-refine", ""
    if name.startswith("llm:") and name[4:].strip():
        from reharness.models.registry import check_spec

        try:
            check_spec(name[4:].strip())
        except ReharnessError as exc:
            raise type(exc)(f"engineer {spec!r}: {exc.message}", hint=exc.hint) from None
        return "llm", name[4:].strip()
    if name in ("llm", "llm:"):
        raise UnknownNameError(
            f"engineer spec {spec!r} names no model backend",
            hint="write llm:BACKEND, e.g. llm:openai:gpt-4o@http://127.0.0.1:8000/v1 or llm:tiny:ENV-SIZE",
        )
    raise UnknownNameError(
        f"unknown engineer {spec!r}",
        hint=did_you_mean(name, ["operators", "operators+lenient", "self-refine", "llm:"])
        + " (llm:BACKEND takes a model spec)",
    )
