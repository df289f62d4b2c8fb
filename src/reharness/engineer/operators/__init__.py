"""The repair-operator library and the ``operators`` engineer (the built-in teacher).

:data:`GENERIC` lists the generic operators (each kit brings its own: ``EnvKit.operators``);
:func:`shipped_operators` lists them with the built-in kits' own; :func:`get_operator` looks one up by name,
:func:`operators_for` lists those that apply to an environment; :func:`merge` builds one patch from several.
:class:`OperatorEngineer` scores operators against a failure packet and samples proposals.

- :mod:`.base`: :class:`Operator` (a parameterised, generic hook program), :class:`ParamSpace`, :func:`merge`;
- :mod:`.common`: operators for every environment: snap to admissible, loop breaker, goal reminder, hints;
- :mod:`.knobs`: harness-config knobs as operators: config edits a patch makes through hooks;
- :mod:`.lenient`: opt-in generic operators that repair replies which yield no action (pretrained targets);
- :mod:`.registry`: the registry: :data:`GENERIC`, :data:`KNOBS`, :data:`OPERATORS` (by name), the kits' own,
  lookup by name and by env;
- :mod:`.engineer`: :class:`OperatorEngineer`: picks and parameterises operators from a packet's evidence.
"""

from __future__ import annotations

from reharness.engineer.operators.base import MAX_OPERATORS, Fragment, Operator, ParamSpace, fill, merge
from reharness.engineer.operators.engineer import OperatorEngineer
from reharness.engineer.operators.registry import (
    GENERIC,
    KNOBS,
    OPERATORS,
    get_operator,
    operators_for,
    program_operators,
    shipped_operators,
)

__all__ = [
    "GENERIC",
    "KNOBS",
    "OPERATORS",
    "MAX_OPERATORS",
    "Fragment",
    "Operator",
    "OperatorEngineer",
    "ParamSpace",
    "fill",
    "get_operator",
    "merge",
    "operators_for",
    "program_operators",
    "shipped_operators",
]
