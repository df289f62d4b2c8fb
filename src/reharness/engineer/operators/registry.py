"""The registry of repair operators: the generic operators (:data:`GENERIC`), the config knobs
(:data:`KNOBS`, repair programs only), the opt-in lenient ones (:data:`LENIENT`) — all three by name in
:data:`OPERATORS` — and each environment's kit's own operators; lookup by name and by env.

A kit brings its environment-specific operators (``EnvKit.operators``); the generic ones apply to every
environment whose kit does not leave them out. :func:`shipped_operators` lists the generic operators and the
built-in kits' own, in a stable order (the order used for ties and listings)."""

from __future__ import annotations

from reharness.core.registry import Registry
from reharness.engineer.operators.base import Operator
from reharness.engineer.operators.common import (
    FormatReminder,
    GoalReminder,
    InvalidActionHint,
    LoopBreaker,
    SnapToAdmissible,
)
from reharness.engineer.operators.knobs import ShowAdmissible, StepWarning
from reharness.engineer.operators.lenient import LENIENT_OPERATORS
from reharness.envs.registry import BUILTIN_KITS, find_kit

#: The generic operators, in a stable order; they read only the generic ``ctx``.
GENERIC: tuple[Operator, ...] = (
    SnapToAdmissible(),
    LoopBreaker(),
    GoalReminder(),
    InvalidActionHint(),
    FormatReminder(),
)
#: Harness-config knobs (:mod:`.knobs`): usable in repair programs, not in the teacher's pool.
KNOBS: tuple[Operator, ...] = (ShowAdmissible(), StepWarning())
#: The lenient operators (:mod:`.lenient`: repairs of replies that yield no action) are generic and opt-in
#: (``--engineer operators+lenient``): in the default pool they would change the teacher's choices on packets
#: of targets that know the protocol.
LENIENT: tuple[Operator, ...] = LENIENT_OPERATORS
#: The operators every environment knows, by name (a kit's own come from its kit: :func:`get_operator`).
OPERATORS: Registry[Operator] = Registry("repair operator")
for _op in GENERIC + KNOBS + LENIENT:
    OPERATORS.add(_op.name, _op)


def shipped_operators() -> tuple[Operator, ...]:
    """The generic operators, then each built-in kit's own, in a stable order (the teacher's whole pool)."""
    own = [op for name in BUILTIN_KITS for op in kit_operators(name)]
    return GENERIC + tuple(own)


def kit_operators(env: str | None) -> tuple[Operator, ...]:
    """The operators ``env``'s kit brings (none for an unknown environment or no environment)."""
    kit = find_kit(env) if env else None
    return tuple(kit.operators) if kit is not None else ()


def get_operator(name: str, env: str | None = None) -> Operator:
    """The operator (or config knob) called ``name``: one of ``env``'s kit, a generic one (:data:`OPERATORS`),
    or one of a built-in kit; an unknown name is the registry's error, listing the close matches."""
    own = {op.name: op for op in kit_operators(env)}
    if name in own:
        return own[name]
    if name in OPERATORS:
        return OPERATORS.get(name)
    shipped = {op.name: op for op in shipped_operators() + KNOBS + LENIENT}
    if name in shipped:
        return shipped[name]
    raise OPERATORS.unknown(name, known=[*shipped, *OPERATORS, *own])


def operators_for(env: str) -> list[Operator]:
    """The operators that apply to ``env``: the generic ones, then its kit's own."""
    return [op for op in GENERIC + kit_operators(env) if op.applies_to(env)]


def program_operators(env: str) -> list[Operator]:
    """What a repair program may use in ``env``: the operators, then the config knobs."""
    return [op for op in GENERIC + kit_operators(env) + KNOBS if op.applies_to(env)]
