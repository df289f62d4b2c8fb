"""Routing statistics from a decision log (for ``reharness pool show --log``): decisions by strategy, each
sibling's picks and rescue rate over recorded outcomes, and how often judges agree with the final choice and
with each other."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from reharness.pool.decision import RouteDecision
from reharness.pool.profile import wilson


def routing_stats(decisions: Sequence[RouteDecision]) -> dict[str, Any]:
    """Summary of ``decisions`` (outcomes merged in, as :func:`~reharness.pool.decision.read_log` gives)."""
    by_strategy = Counter(d.strategy for d in decisions)
    picks: Counter[str] = Counter(d.choice[0] for d in decisions if d.choice)
    h0_picks = sum(1 for d in decisions if d.kind == "rank1" and not d.choice)
    attempts: Counter[str] = Counter()
    successes: Counter[str] = Counter()
    rescued_groups = tried_groups = 0
    for d in decisions:
        for out in d.outcome:
            attempts[out.sibling_id] += out.attempts
            successes[out.sibling_id] += out.successes
        if d.outcome:
            tried_groups += 1
            rescued_groups += any(o.successes for o in d.outcome)
    siblings = {}
    for sid in sorted(set(picks) | set(attempts)):
        low, high = wilson(successes[sid], attempts[sid])
        siblings[sid] = {
            "picked_first": picks[sid],
            "attempts": attempts[sid],
            "successes": successes[sid],
            "rescue_rate": successes[sid] / attempts[sid] if attempts[sid] else None,
            "rescue_ci": [low, high] if attempts[sid] else None,
        }
    judges: dict[str, dict[str, Any]] = {}
    pairs: dict[str, list[int]] = {}
    for d in decisions:
        voted = {v.judge: v.vote for v in d.votes}
        for name, vote in voted.items():
            row = judges.setdefault(name, {"votes": 0, "abstained": 0, "agreed_with_choice": 0, "calls": 0})
            row["votes" if vote else "abstained"] += 1
            row["agreed_with_choice"] += bool(vote and d.choice and vote == d.choice[0])
        for v in d.votes:
            judges[v.judge]["calls"] += v.calls
        for a, b in combinations(sorted(voted), 2):
            if voted[a] and voted[b]:
                both = pairs.setdefault(f"{a} ~ {b}", [0, 0])
                both[0] += voted[a] == voted[b]
                both[1] += 1
    for row in judges.values():
        row["agreement"] = row["agreed_with_choice"] / row["votes"] if row["votes"] else None
    return {
        "decisions": len(decisions),
        "by_strategy": dict(sorted(by_strategy.items())),
        "h0_picks": h0_picks,
        "groups_tried": tried_groups,
        "groups_rescued": rescued_groups,
        "model_calls": sum(d.model_calls for d in decisions),
        "tokens": sum(d.tokens for d in decisions),
        "siblings": siblings,
        "judges": judges,
        "judge_pairs": {
            k: {"agree": v[0], "both_voted": v[1], "rate": v[0] / v[1]} for k, v in pairs.items()
        },
    }
