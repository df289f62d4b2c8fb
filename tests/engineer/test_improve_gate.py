"""``improve``'s acceptance rule decides: the regression gate (``--max-regressions``) and the tie-breaks.

The batch is the 8 household train tasks of :func:`test_improve_cli.config` (seed 0) played by the clumsy
solver. Its baseline: 3 successes (one ``pick_and_place_simple``, two ``look_at_obj_in_light``), 5 failures
(one look, one heat, one simple, two cool), each rescued by snapping near-miss commands. Candidates are built
from two knobs per task type, read from ``ctx['task']['task_type']``: *snap* (rescue that type's failures)
and *break* (force ``look`` every step, so that type's successes fail). So each candidate's Δ_B, rescued and
broken counts are known in advance, and the accepted one must follow the documented order: Δ_B > 0 and at
most ``max_regressions`` broken, then best Δ_B, fewer broken, more rescued, earlier candidate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clumsy import ClumsySolver
from test_improve_cli import FixedEngineer, config

from reharness.engineer.improve import ImproveResult, improve, select_best
from reharness.measure.paired import PairedResult
from reharness.patches import Patch, load_patch

LOOK, HEAT, SIMPLE, COOL = (
    "look_at_obj_in_light",
    "pick_heat_then_place_in_recep",
    "pick_and_place_simple",
    "pick_cool_then_place_in_recep",
)
BODY = """import difflib

SNAP = {snap}
BREAK = {brk}


def hook(ctx, nb):
    kind = (ctx.get("task") or {{}}).get("task_type")
    if kind in BREAK and ctx["step"] >= 1:
        return {{"type": "force_action", "action": "look"}}
    action = ctx["action"] or {{}}
    text = " ".join(str(action.get("text") or "").lower().replace(" a ", " ").split())
    admissible = list(ctx.get("admissible") or [])
    if kind not in SNAP or not text or not admissible or text in admissible:
        return None
    close = difflib.get_close_matches(text, admissible, n=1, cutoff=0.75)
    return {{"type": "rewrite_action", "action": close[0]}} if close else None
"""


def typed(snap: set[str], brk: frozenset[str] | set[str] = frozenset(), note: str = "") -> Patch:
    code = BODY.format(snap=sorted(snap), brk=sorted(brk))
    return Patch({"before_action": code}, f"snap {sorted(snap)}, break {sorted(brk)} {note}", "household")


#: rescues 4 (look, heat, 2 cool), breaks the simple success: Δ_B = 3/8
BEST_BUT_BREAKS = typed({LOOK, HEAT, COOL}, {SIMPLE})
#: rescues the 2 cool failures, breaks nothing: Δ_B = 2/8
SAFE = typed({COOL})
#: rescues heat and 2 cool, breaks nothing: Δ_B = 3/8, the same as BEST_BUT_BREAKS
SAFE_TIE = typed({HEAT, COOL})
#: the same effect as SAFE_TIE (another description, so another identity)
SAFE_TIE_TWIN = typed({HEAT, COOL}, note="(twin)")


async def _improve(out: Path, patches: list[Patch], max_regressions: int) -> ImproveResult:
    engineer = FixedEngineer(list(patches))
    cfg = config(out, k=len(patches), eval_n=4, max_regressions=max_regressions)
    return await improve(cfg, agent=ClumsySolver(), engineer=engineer)


def _measured(result: ImproveResult) -> dict[str, tuple[float, int, int, bool]]:
    return {c.id: (round(c.delta, 6), c.rescued, c.broken, c.accepted) for c in result.candidates}


async def test_the_gate_rejects_the_best_candidate_when_it_breaks_too_much(tmp_path: Path) -> None:
    strict = await _improve(tmp_path, [BEST_BUT_BREAKS, SAFE], max_regressions=0)
    assert strict.rounds[0].baseline_success == 3 / 8
    assert _measured(strict) == {"r1-c0": (0.375, 4, 1, False), "r1-c1": (0.25, 2, 0, True)}
    assert load_patch(strict.stack[0]).identity == SAFE.identity
    # the same measured candidates (loaded from the store) under a looser gate: the best Δ_B now wins
    loose = await _improve(tmp_path, [BEST_BUT_BREAKS, SAFE], max_regressions=1)
    assert _measured(loose) == {"r1-c0": (0.375, 4, 1, True), "r1-c1": (0.25, 2, 0, False)}
    assert load_patch(loose.stack[0]).identity == BEST_BUT_BREAKS.identity


async def test_equal_delta_goes_to_fewer_broken_then_to_the_earlier_candidate(tmp_path: Path) -> None:
    result = await _improve(tmp_path, [BEST_BUT_BREAKS, SAFE_TIE, SAFE_TIE_TWIN], max_regressions=1)
    assert _measured(result) == {
        "r1-c0": (0.375, 4, 1, False),  # eligible, same Δ_B, but one broken task
        "r1-c1": (0.375, 3, 0, True),  # fewer broken; ties with its twin, and comes first
        "r1-c2": (0.375, 3, 0, False),
    }
    assert load_patch(result.stack[0]).identity == SAFE_TIE.identity


def _result(i: int, delta: float, rescued: int, broken: int, status: str = "ok") -> PairedResult:
    return PairedResult(
        candidate_id=f"c{i}", status=status, n=8, baseline_score=0.0, patched_score=delta, delta=delta,  # type: ignore[arg-type]
        baseline_success=0.0, patched_success=delta, success_delta=delta,
        rescued=[f"r{j}" for j in range(rescued)], broken=[f"b{j}" for j in range(broken)],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("results", "max_regressions", "accepted"),
    [
        # (Δ, rescued, broken) per candidate; binary household scores cannot separate "more rescued" at
        # equal Δ and broken, a fractional score (shop) can: this level is checked on the rule itself
        ([(0.3, 4, 1), (0.3, 5, 1)], 1, "c1"),  # equal Δ and broken: more rescued wins
        ([(0.3, 5, 1), (0.3, 4, 0)], 1, "c1"),  # equal Δ: fewer broken beats more rescued
        ([(0.2, 2, 0), (0.3, 4, 2)], 1, "c0"),  # the gate: best Δ breaks 2 > 1
        ([(0.2, 2, 0), (0.3, 4, 2)], 2, "c1"),
        ([(0.0, 1, 1), (-0.1, 0, 1)], 1, None),  # Δ must be > 0
        ([(0.3, 3, 0, "degenerate"), (0.1, 1, 0)], 1, "c1"),  # only valid candidates
    ],
)
def test_selection_rule_order(results: list[tuple], max_regressions: int, accepted: str | None) -> None:
    candidates = [_result(i, *r) for i, r in enumerate(results)]
    best = select_best(candidates, max_regressions)
    assert (best.candidate_id if best else None) == accepted
