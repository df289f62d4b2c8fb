"""Harness engineers (layer ``engineer``): proposers that turn a failure packet into candidate patches.

Proposers:

- :mod:`.base`: :class:`Engineer`, :class:`Proposal`;
- :mod:`.factory`: the spec registry :data:`ENGINEERS` and :func:`make_engineer` (``operators``,
  ``self-refine``, ``llm:BACKEND``, ...);
- :mod:`.operators`: the repair-operator library and :class:`OperatorEngineer` (the built-in teacher);
- :mod:`.self_refine`: :class:`SelfRefineEngineer`, the fixed-rule Self-Refine baseline;
- :mod:`.llm`: the prompted engineer :class:`LLMEngineer` on any model backend;
- :mod:`.prompts`: the prompted engineer's prompt: hook API, ``ctx`` schema, effect and validation rules;
- :mod:`.compact`: prompt styles: the full Harness-R1 prompt, or a compact one for small-context engineers;
- :mod:`.program`: repair programs: a compact reply language a tiny engineer writes, compiled to hook code;
- :mod:`.program_prefix`: whether a partial reply can still become a valid program (constrained decoding).

The Harness-R1 loop at inference time (candidates are judged by :mod:`reharness.measure`):

- :mod:`.improve`: the loop of ``reharness improve``;
- :mod:`.improve_result`: ``reharness improve``'s validated config and result, shared by loop and reports;
- :mod:`.report`: ``reharness improve``'s candidate table (CSV) and Markdown report.

Importing this package loads only the interface; the implementations load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from reharness.engineer.base import Engineer, Proposal, error_counts
from reharness.engineer.factory import ENGINEER_SPECS, ENGINEERS, make_engineer

if TYPE_CHECKING:
    from reharness.engineer.llm import LLMEngineer
    from reharness.engineer.operators import GENERIC, Operator, OperatorEngineer
    from reharness.engineer.self_refine import SelfRefineEngineer

_LAZY = {
    "LLMEngineer": "llm",
    "GENERIC": "operators",
    "Operator": "operators",
    "OperatorEngineer": "operators",
    "SelfRefineEngineer": "self_refine",
}

__all__ = [
    "ENGINEERS",
    "ENGINEER_SPECS",
    "GENERIC",
    "Engineer",
    "LLMEngineer",
    "Operator",
    "OperatorEngineer",
    "Proposal",
    "SelfRefineEngineer",
    "error_counts",
    "make_engineer",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reharness.engineer' has no attribute {name!r}")
    return getattr(import_module(f"reharness.engineer.{module}"), name)
