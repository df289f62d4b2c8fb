"""``OperatorEngineer``: pick and parameterise repair operators from a failure packet's evidence.

**Scoring.** An operator applicable to the packet's environment scores

    operator weight * (max over its codes of code weight * (failed episodes with the code / failed episodes)
                       + 0.5 * max over its signals of (shown traces where the signal is > 0 / shown traces))
    + a small prior,

so the codes and signals that dominate the batch pull in the operators that address them. Outcome codes that
accompany almost every failure of a weak agent (``step_limit``, ``no_progress``, ``wrong_answer``) weigh less
than behavioural ones (``invalid_action``, ``sql_error``, ``premature_answer``, ...), and generic operators
(the goal reminder) carry a lower operator weight, so a specific repair outranks a generic one when the packet
shows its cause. Maxima rather than sums keep operators that list many codes or signals from outscoring
focused ones.

**Sampling** (deterministic given ``seed``). Proposal 0 is the best operator with its default parameters,
proposal 1 the best two with defaults; every further proposal draws 1–3 operators (sizes weighted
0.45/0.35/0.20) without replacement with probability proportional to score, and each parameter uniformly from
its space, redrawing (up to a bound) combinations already proposed so the ``n`` proposals differ. The chosen
operators are merged into one patch (:func:`~reharness.engineer.operators.base.merge`), rendered as a
Harness-R1 reply whose ``<think>`` block states the evidence and the choice (an SFT target), and validated
like any engineer's patch. ``Proposal.meta`` records the operators, their parameters and the scores, and
``program``: the same patch as a repair program (:mod:`reharness.engineer.program`), which compiles to the
identical hooks — the SFT target of a tiny engineer that replies in programs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reharness.core.hashing import derive_seed
from reharness.engineer.base import Engineer, Proposal, finish_patch, render_reply
from reharness.engineer.operators.base import MAX_OPERATORS, Operator, merge
from reharness.engineer.operators.registry import GENERIC
from reharness.engineer.program import render_program
from reharness.envs.registry import find_kit
from reharness.runtime.effects import HOOK_POINTS

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket

Choice = list[tuple[Operator, dict[str, Any]]]
SIZE_WEIGHTS = (0.45, 0.35, 0.20)
PRIOR = 0.05
SIGNAL_WEIGHT = 0.5
#: Weight of a failure code in the score (1.0 when absent): outcome codes say less about the cause.
CODE_WEIGHTS = {"step_limit": 0.3, "no_progress": 0.5, "wrong_answer": 0.5}
REDRAWS = 30


def signal_fractions(packet: FailurePacket) -> dict[str, float]:
    """For each signal, the fraction of the packet's traces where it is positive (``score`` excluded)."""
    traces = packet.traces
    names = sorted({k for t in traces for k in t.signals if k != "score"})
    return {k: sum(1 for t in traces if t.signals.get(k, 0) > 0) / len(traces) for k in names}


class OperatorEngineer(Engineer):
    """The ``operators`` engineer (see the module docstring)."""

    name = "operators"

    def __init__(
        self,
        operators: Sequence[Operator] | None = None,
        max_operators: int = MAX_OPERATORS,
        extra: Sequence[Operator] = (),
    ) -> None:
        """``operators``: exactly these (default: the generic ones, then each env's kit's own); ``extra``:
        opt-in operators added after the generic ones (``operators+lenient``)."""
        self.operators = tuple(operators if operators is not None else GENERIC) + tuple(extra)
        self.with_kit_operators = operators is None
        self.max_operators = max(1, min(max_operators, MAX_OPERATORS))

    def pool_for(self, env: str) -> tuple[Operator, ...]:
        """The operators considered for ``env``: the given ones, then (by default) the env's kit's own."""
        if not self.with_kit_operators:
            return self.operators
        kit = find_kit(env)
        return self.operators + tuple(kit.operators if kit is not None else ())

    def scores(self, packet: FailurePacket) -> dict[str, float]:
        """Score of every operator that applies to the packet's environment, in registry order."""
        env = packet.header.benchmark
        failed = max(1, packet.header.failures_found)
        counts = packet.header.code_counts
        fractions = signal_fractions(packet) if packet.traces else {}
        out: dict[str, float] = {}
        for op in self.pool_for(env):
            if not op.applies_to(env):
                continue
            codes = max(
                (CODE_WEIGHTS.get(code, 1.0) * counts.get(code, 0) / failed for code in op.codes), default=0
            )
            signals = max((fractions.get(name, 0.0) for name in op.signals), default=0.0)
            out[op.name] = round(op.weight * (codes + SIGNAL_WEIGHT * signals) + PRIOR, 6)
        return out

    def plan(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Choice]:
        """The operator combinations (with parameters) of the ``n`` proposals."""
        env = packet.header.benchmark
        scores = self.scores(packet)
        pool = [op for op in self.pool_for(env) if op.name in scores]
        if not pool:
            return []
        ranked = sorted(pool, key=lambda op: -scores[op.name])  # stable: registry order breaks ties
        plans: list[Choice] = []
        seen: set[str] = set()
        for i in range(n):
            if i < 2 and i < len(ranked) and i < self.max_operators:
                choice: Choice = [(op, op.defaults(env)) for op in ranked[: i + 1]]
            else:
                rng = random.Random(derive_seed("operators", seed, i))
                choice = self._draw(rng, pool, scores, env)
                for _ in range(REDRAWS):
                    if _key(choice) not in seen:
                        break
                    choice = self._draw(rng, pool, scores, env)
            seen.add(_key(choice))
            plans.append(choice)
        return plans

    def _draw(self, rng: random.Random, pool: list[Operator], scores: dict[str, float], env: str) -> Choice:
        limit = min(self.max_operators, len(pool))
        size = rng.choices(range(1, limit + 1), weights=SIZE_WEIGHTS[:limit])[0]
        left = list(pool)
        picked: list[Operator] = []
        for _ in range(size):
            op = rng.choices(left, weights=[scores[o.name] for o in left])[0]
            left.remove(op)
            picked.append(op)
        picked.sort(key=pool.index)
        return [(op, {k: rng.choice(v) for k, v in op.space(env).items()}) for op in picked]

    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        scores = self.scores(packet)
        plans = self.plan(packet, n, seed)
        proposals: list[Proposal] = []
        for i in range(n):
            meta: dict[str, Any] = {"engineer": self.name, "index": i, "seed": seed, "scores": scores}
            if i >= len(plans):
                error = f"no repair operator applies to {packet.header.benchmark!r}"
                proposals.append(Proposal(None, "", error, "no_operator", meta))
                continue
            choice = plans[i]
            meta["operators"] = [{"name": op.name, "params": params} for op, params in choice]
            meta["program"] = render_program(choice, packet.header.benchmark)  # the same patch, as a program
            try:
                patch = merge(choice, packet.header.benchmark)
            except Exception as exc:  # an operator bug is a failed proposal, never a crash of the loop
                proposals.append(Proposal(None, "", f"{type(exc).__name__}: {exc}", "operator_error", meta))
                continue
            reply = render_reply(patch, thinking(packet, choice, scores))
            proposals.append(finish_patch(patch, reply, packet, meta))
        return proposals


def _key(choice: Choice) -> str:
    return json.dumps([[op.name, params] for op, params in choice], sort_keys=True)


def thinking(packet: FailurePacket, choice: Choice, scores: dict[str, float]) -> str:
    """The ``<think>`` text of an operator proposal: the evidence and why these repairs (deterministic)."""
    h, row = packet.header, packet.row
    codes = ", ".join(f"{k}={v}" for k, v in sorted(h.code_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [
        f"{h.failures_found} of {row.batch_size} {h.benchmark} episodes failed.",
        f"Failure codes: {codes or 'none'}.",
    ]
    fractions = signal_fractions(packet) if packet.traces else {}
    relevant = sorted({s for op, _ in choice for s in op.signals if fractions.get(s, 0.0) > 0})
    if relevant:
        shown = ", ".join(
            f"{s} in {round(fractions[s] * len(packet.traces))}/{len(packet.traces)}" for s in relevant
        )
        lines.append(f"Signals in the shown traces: {shown}.")
    lines.append("Repairs, written against ctx fields only (no task ids, answers or object instances):")
    for op, params in choice:
        addressed = [c for c in op.codes if h.code_counts.get(c)] or list(op.codes)
        lines.append(
            f"- {op.name} (addresses {', '.join(addressed)}; score {scores.get(op.name, 0.0):.2f}): "
            f"{op.describe(params)}."
        )
    used = {p for op, params in choice for p in op.points(params, h.benchmark)}
    points = [p for p in HOOK_POINTS if p in used]
    lines.append(
        f"Hook points used: {', '.join(points)}; operators sharing a point are merged into one hook."
    )
    return "\n".join(lines)
