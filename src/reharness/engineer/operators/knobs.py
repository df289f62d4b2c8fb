"""Harness-config knobs as operators: config edits a patch can make through hooks.

A patch is an overlay of hooks on the baseline's harness (paired reruns keep the baseline's
:class:`~reharness.runtime.harness.HarnessConfig`, which is what keeps Δ_B paired), so a "config edit" in a
repair program is a knob whose hook reproduces what the config field would do: ``show_admissible`` lists the
admissible actions before a decision (like ``HarnessConfig.show_admissible``), ``step_warning`` says how many
steps are left (a step-budget notice, like a harness that shows the remaining turns). They are not in the
teacher's pool (:data:`~reharness.engineer.operators.registry.GENERIC` and the kits' own): only repair
programs use them, so they are repairs the teacher's heuristic selection never picks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

SHOW = """
def show_admissible(ctx, nb):
    options = [str(a) for a in (ctx.get("admissible") or [])]
    counters = ctx.get("counters") or {}
    if not options or (counters.get("invalid_streak") or 0) < <<after_invalid>>:
        return None
    shown = options[:<<limit>>]
    more = " (and " + str(len(options) - len(shown)) + " more)" if len(options) > len(shown) else ""
    return {"message": ("Valid actions now: " + "; ".join(shown) + more + ".")[:900]}
"""


class ShowAdmissible(Operator):
    name = "show_admissible"
    summary = "Config knob (show_admissible): list the admissible actions before each decision"
    codes = ("invalid_action", "format_error")
    generic = True
    signals = ("invalid_actions", "nothing_happens")
    priority = 75
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"limit": (3, 40), "after_invalid": (0, 3)}

    def space(self, env: str) -> ParamSpace:
        return {"limit": (12, 6, 24), "after_invalid": (0, 1)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(SHOW, limit=params["limit"], after_invalid=params["after_invalid"])
        return {"before_decision": Fragment("show_admissible", code)}


WARN = """
def step_warning(ctx, nb):
    left = ctx.get("remaining_steps")
    if left is None or left > <<left>> or left <= 0:
        return None
    message = "Only " + str(left) + " steps are left. "
    return {"message": message + <<advice>>}
"""
GENERIC_WARN_ADVICE = "Finish the task now with what you have."


class StepWarning(Operator):
    name = "step_warning"
    summary = "Config knob (step budget): warn before each decision when few steps are left"
    codes = ("step_limit",)
    generic = True
    signals = ("step_limit_hit",)
    priority = 80
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"left": (1, 10)}

    def space(self, env: str) -> ParamSpace:
        return {"left": (3, 2, 5)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(
            WARN, left=params["left"], advice=str(self.settings(env).get("advice", GENERIC_WARN_ADVICE))
        )
        return {"before_decision": Fragment("step_warning", code)}
