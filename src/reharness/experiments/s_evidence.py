"""The evidence sections of ``reharness experiment s``'s report (issue 37): paired comparisons against
``none`` and ``resample`` (an ordering only where the paired interval excludes 0, else "tie"), the targeted
failure-code rates in H0, compute per method, the router's agreement with the oracle and the share of rescued
successes learnable in H0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reharness.experiments.s_config import SResult, SRow


CODE_WORDS = ("more", "fewer")  # a failure-code rate's direction: up is not better


def _pp(value: float) -> str:
    return f"{100 * value:+.1f}"


def verdict_word(low: float, high: float, words: tuple[str, str] = ("better", "worse")) -> str:
    """``better`` / ``worse`` (or the given words for up and down) where the interval excludes 0, else
    ``tie``; for a failure-code rate, where up is not better, pass ``words=CODE_WORDS``."""
    return words[0] if low > 0 else words[1] if high < 0 else "tie"


def verdict(delta: float, low: float, high: float, words: tuple[str, str] = ("better", "worse")) -> str:
    """``+3.0 [+1.0, +5.0] better`` / ``worse`` / ``tie`` (the interval holds 0)."""
    return f"{_pp(delta)} [{_pp(low)}, {_pp(high)}] {verdict_word(low, high, words)}"


def _vs(interval: list[float]) -> str:
    delta, low, high = interval
    return verdict(delta, low, high)


def comparison_lines(result: SResult) -> list[str]:
    lines = [
        "| env | method | success | Δ vs none [paired CI] | Δ vs resample [paired CI] |",
        "|---|---|---|---|---|",
    ]
    for r in result.rows:
        cells = [_vs(r.vs[o]) if o in r.vs else "-" for o in ("none", "resample")]
        lines.append(f"| {r.env} | {r.method} | {100 * r.success:.1f} | {cells[0]} | {cells[1]} |")
    return lines


def target_lines(result: SResult) -> list[str]:
    lines = []
    for env, codes in result.target_codes.items():
        lines.append(f"- {env}: the pool's siblings target {', '.join(codes) or '(no code)'}")
    lines += [
        "",
        "| env | method | episodes with a targeted code (%) | Δ vs start [paired CI] |",
        "|---|---|---|---|",
    ]
    for r in result.rows:
        change = verdict(r.target_delta, r.target_delta_low, r.target_delta_high, words=CODE_WORDS)
        lines.append(f"| {r.env} | {r.method} | {100 * r.target_code_rate:.1f} | {change} |")
    return lines


def _reanchor(row: SRow, result: SResult) -> str:
    costs = result.training.get(row.env, {}).get(row.method, {}).get("costs") or {}
    return str(int((costs.get("episodes") or {}).get("reanchor", 0)))


def cost_lines(result: SResult) -> list[str]:
    lines = [
        "| env | method | rollouts | re-anchoring episodes | model calls | tokens |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.rows:
        if r.method == "start":
            continue
        alias = f" (= {r.alias})" if r.alias else ""
        lines.append(
            f"| {r.env} | {r.method}{alias} | {r.rollouts} | {_reanchor(r, result)} | {r.model_calls} | "
            f"{r.tokens} |"
        )
    for env, cost in result.pool_costs.items():
        stored = cost.get("stored_runs", 0)
        what = (
            f"{cost['episodes']} episodes, {cost['model_calls']} model calls, {cost['tokens']} tokens"
            if stored
            else "not stored with the pool (a pool given with --pool without its runs)"
        )
        lines.append(
            f"\nPool of {env} (evolution and profiling, shared by every method, counted once): {what}."
        )
    return lines


def oracle_lines(result: SResult) -> list[str]:
    if not result.oracle:
        return ["(no sibling-choosing run)"]
    lines = [
        "The oracle of a training task is the set of siblings that rescued it in any attempt made (by the "
        "methods below; policies differ between runs). Decisions on tasks no attempt rescued are not "
        "counted. Per decision: `ENV/oracle.jsonl`.",
        "",
        "| env | method | decisions | oracle known | agreement | a uniform choice's agreement |",
        "|---|---|---|---|---|---|",
    ]
    for env, methods in result.oracle.items():
        for method, a in methods.items():
            lines.append(
                f"| {env} | {method} | {int(a['decisions'])} | {int(a['known'])} | "
                f"{100 * a['agreement']:.1f}% | {100 * a['random_agreement']:.1f}% |"
            )
    return lines


def learnable_lines(result: SResult) -> list[str]:
    c = result.config
    lines = [
        f"Rewritten turns: `{c.rewritten_turns}`. A rescued success with a rewritten or forced turn was "
        "repaired by the harness, not the policy: under `mask` that turn teaches nothing in H0.",
        "",
        "| env | method | rescued successes | with a rewritten/forced turn | learnable share |",
        "|---|---|---|---|---|",
    ]
    for env, methods in result.learnable.items():
        for method, v in methods.items():
            lines.append(
                f"| {env} | {method} | {int(v['rescued_successes'])} | {int(v['with_rewrites'])} | "
                f"{100 * v['learnable_share']:.1f}% |"
            )
    return lines


def evidence_sections(result: SResult) -> list[str]:
    return [
        "## Paired comparisons (an ordering only where the paired interval excludes 0)",
        "",
        *comparison_lines(result),
        "",
        "## Targeted failure codes in H0 (behaviour the siblings should have taught)",
        "",
        *target_lines(result),
        "",
        "## Compute per method",
        "",
        *cost_lines(result),
        "",
        "## Router vs oracle",
        "",
        *oracle_lines(result),
        "",
        "## Rescued successes learnable in H0",
        "",
        *learnable_lines(result),
        "",
    ]
