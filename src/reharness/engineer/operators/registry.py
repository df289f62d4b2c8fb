"""The registry of repair operators: :data:`OPERATORS` in a stable order (the teacher's pool), the config
:data:`KNOBS` (repair programs only), lookup by name and by env."""

from __future__ import annotations

from reharness.core.errors import UnknownNameError, did_you_mean
from reharness.engineer.operators.apps import ApiDocLookup, LoginFirst, PaginationReminder
from reharness.engineer.operators.base import Operator
from reharness.engineer.operators.code import EditErrorHint, FailingTestHint, SubmitGuard
from reharness.engineer.operators.common import (
    FormatReminder,
    GoalReminder,
    InvalidActionHint,
    LoopBreaker,
    SnapToAdmissible,
)
from reharness.engineer.operators.db import (
    AnswerGrounding,
    AnswerGuard,
    EmptyResultHint,
    SqlErrorHint,
    SqlGuard,
)
from reharness.engineer.operators.knobs import ShowAdmissible, StepWarning
from reharness.engineer.operators.lenient import LENIENT_OPERATORS
from reharness.engineer.operators.shop import PurchaseGuard, SearchDedupe, StallBreaker

#: Every operator, in a stable order (the order used for ties and listings).
OPERATORS: tuple[Operator, ...] = (
    SnapToAdmissible(),
    LoopBreaker(),
    GoalReminder(),
    InvalidActionHint(),
    FormatReminder(),
    PurchaseGuard(),
    SearchDedupe(),
    StallBreaker(),
    SqlErrorHint(),
    EmptyResultHint(),
    AnswerGuard(),
    AnswerGrounding(),
    SqlGuard(),
    SubmitGuard(),
    FailingTestHint(),
    EditErrorHint(),
    ApiDocLookup(),
    LoginFirst(),
    PaginationReminder(),
)
#: Harness-config knobs (:mod:`.knobs`): usable in repair programs, not in the teacher's pool.
KNOBS: tuple[Operator, ...] = (ShowAdmissible(), StepWarning())
#: The lenient operators (:mod:`.lenient`) are opt-in (``--engineer operators+lenient``): in the default pool
#: they would change the teacher's choices on packets of targets that know the protocol.
_BY_NAME = {op.name: op for op in OPERATORS + KNOBS + LENIENT_OPERATORS}


def get_operator(name: str) -> Operator:
    """The operator (or config knob) called ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown repair operator {name!r}", hint=did_you_mean(name, list(_BY_NAME))
        ) from None


def operators_for(env: str) -> list[Operator]:
    """The operators that apply to ``env``, in :data:`OPERATORS` order."""
    return [op for op in OPERATORS if op.applies_to(env)]


def program_operators(env: str) -> list[Operator]:
    """What a repair program may use in ``env``: the operators, then the config knobs."""
    return [op for op in OPERATORS + KNOBS if op.applies_to(env)]
