"""The Markdown report of ``reharness experiment s`` (``OUT/report.md``): tables, diagnostic and plots.

Sources: the result rows (held-out success in H0), each training run's ``metrics.jsonl`` (one line per
optimizer step), the router runs' re-anchored profiles (``profiles/step-N.json``, against the pool's own
``profile.json`` at step 0), the behaviour rates of the evaluation episodes and, per targeted failure code,
its rate in H0 against the start's (from the stored ``eval.jsonl``). Plots — H0 success against
rollouts spent, rescue rate per sibling over training, profile drift at each re-anchoring, behaviour rates
before/after training — are drawn with matplotlib when it is installed (the ``experiments`` extra); without
it the report says so and keeps every table (the numbers never depend on matplotlib).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reharness.experiments.s_data import diagnostic, drift, metrics, sibling_names
from reharness.experiments.s_evidence import CODE_WORDS, evidence_sections, verdict
from reharness.experiments.s_plots import draw_plots

if TYPE_CHECKING:
    from reharness.experiments.s_config import SResult


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _signed(delta: float, low: float, high: float) -> str:
    """A difference in points with its interval: ``+3.0 [-1.0, +7.0]``."""
    return f"{100 * delta:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def _tables(result: SResult) -> list[str]:
    envs = result.config.envs
    lines = [
        "| method | "
        + " | ".join(f"{e}: success [95% CI] (Δ vs start [paired CI]) rollouts" for e in envs)
        + " | average |",
        "|---|" + "---|" * (len(envs) + 1),
    ]
    for method in dict.fromkeys(r.method for r in result.rows):
        cells = []
        for env in envs:
            row = next((r for r in result.rows if r.method == method and r.env == env), None)
            if row is None:
                cells.append("-")
                continue
            alias = f" = {row.alias}" if row.alias else ""
            delta = _signed(row.delta_vs_start, row.delta_low, row.delta_high)
            interval = f"[{_pct(row.ci_low)}, {_pct(row.ci_high)}]"
            cells.append(f"{_pct(row.success)} {interval} ({delta}) {row.rollouts}{alias}")
        average = result.average.get(method)
        lines.append(
            f"| {method} | " + " | ".join(cells) + f" | {_pct(average) if average is not None else '-'} |"
        )
    lines += ["", "### The router policy with Rank-1 routing", ""]
    if result.rank1:
        lines += [
            "| env | Rank-1 success [95% CI] | Δ vs the router policy in H0 [paired CI] | routing |",
            "|---|---|---|---|",
        ]
        for r in result.rank1:
            routing = ", ".join(f"{k[:12]}: {v}" for k, v in r.routing.items())
            lines.append(
                f"| {r.env} | {_pct(r.success)} [{_pct(r.ci_low)}, {_pct(r.ci_high)}] | "
                f"{_signed(r.delta_vs_h0, r.delta_low, r.delta_high)} | {routing} |"
            )
    else:
        lines.append("(router not run)")
    return lines


def _diagnostic_lines(result: SResult, out: Path) -> list[str]:
    lines = [
        "| env | method | groups | all-fail under H0 | rescues tried | rescued (≥1 success) | share rescued |"
        " first step: H0 success, all-fail groups |",
        "|---|---|---|---|---|---|---|---|",
    ]
    per_sibling: list[str] = []
    for env in result.config.envs:
        for method, summary in result.training.get(env, {}).items():
            if summary.get("alias"):
                continue
            d = diagnostic(metrics(out, env, method))
            first = d["first_step"]
            h0 = first.get("h0_success")
            lines.append(
                f"| {env} | {method} | {d['groups']} | {d['all_fail']} ({_pct(d['all_fail_share'])}%) | "
                f"{d['tried']} | {d['succeeded']} | {_pct(d['rescued_share'])}% | "
                f"{_pct(h0) if h0 is not None else '-'}%, "
                f"{first.get('all_fail_groups')}/{first.get('groups')} |"
            )
            for name, cell in d["per_sibling"].items():
                counts = f"{cell['tried']} | {cell['succeeded']} | {cell['audit_lost']}"
                per_sibling.append(f"| {env} | {method} | {name} | {counts} |")
    if per_sibling:
        lines += [
            "",
            "| env | method | rescued under | tried | succeeded | rollouts lost to the audit |",
            "|---|---|---|---|---|---|",
        ]
        lines += per_sibling
    return lines


def _behaviour_lines(result: SResult) -> list[str]:
    keys: list[str] = []
    for methods in result.behaviour.values():
        for rates in methods.values():
            keys += [k for k in rates if k not in keys]
    if not keys:
        return ["(no evaluation)"]
    lines = ["| env | method | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
    for env, methods in result.behaviour.items():
        for method, rates in methods.items():
            lines.append(f"| {env} | {method} | " + " | ".join(f"{rates.get(k, 0):.3f}" for k in keys) + " |")
    return lines


def _code_lines(result: SResult, out: Path) -> list[str]:
    """Each targeted failure code's rate per episode in H0 against the start's, paired per task (read back
    from the stored ``eval.jsonl`` and ``result.json``: the rows ``experiment s-seeds`` pools)."""
    from reharness.core.errors import DataError
    from reharness.experiments.s_seeds import code_rows, read_run

    try:
        run = read_run(out)
    except DataError:
        return ["(the run's evaluation is not stored)"]
    rows = [r for env in result.config.envs for r in code_rows([run], env)]
    if not rows:
        return ["(no targeted code occurs in any evaluation episode)"]
    lines = ["| env | method | code | episodes with it (%) | Δ vs start [paired CI] |", "|---" * 5 + "|"]
    for r in rows:
        vs = r.get("vs_start")
        change = "-" if vs is None else verdict(vs["delta"], vs["low"], vs["high"], words=CODE_WORDS)
        lines.append(f"| {r['env']} | {r['method']} | {r['code']} | {_pct(r['rate'])} | {change} |")
    return lines


def _drift_lines(result: SResult, out: Path) -> list[str]:
    lines = []
    for env in result.config.envs:
        if "router" not in result.training.get(env, {}) or result.training[env]["router"].get("alias"):
            continue
        names = sibling_names(result.config.pool_for(env))
        points = drift(result.config.pool_for(env), out / env / "router")
        if len(points) <= 1:
            lines.append(
                f"- {env}: no re-anchoring during training (reanchor_every={result.config.reanchor_every})."
            )
            continue
        for p in points:
            rates = ", ".join(f"{names.get(s, s[:8])} {_pct(v)}%" for s, v in p["rates"].items())
            moved = "" if p.get("drift") is None else f"; drift {p['drift']:.3f}"
            h0 = "-" if p["h0_success"] is None else f"{_pct(p['h0_success'])}%"
            if p.get("same_way") is False:
                moved = "; drift not measured (the anchor before was measured another way)"
            lines.append(f"- {env}, {p['label']}: H0 success {h0}; rescue rate {rates}{moved}")
    return lines or ["(no router run with a pool)"]


def write_report(result: SResult, out: Path) -> Path:
    c = result.config
    notes = [
        f"- {env}: the pool has no siblings, so router, vote and random are policy-only GRPO (reported as "
        "none)."
        for env, has in result.siblings.items()
        if not has
    ]
    lines = [
        "# Harness-S at small scale: rescue training against its baselines",
        "",
        f"Starting policy `{c.agent}`; environments {', '.join(c.envs)}; {c.steps} GRPO steps of "
        f"{c.tasks_per_step} train tasks × k = {c.k} rollouts at temperature {c.temperature}, seed {c.seed}; "
        f"same task stream for every method. Evaluation: {c.test_n} held-out `test` tasks, greedy, in H0, "
        "the same tasks and seeds for every policy. Intervals: 95 % bootstrap of the success rate over "
        "tasks; Δ vs start: paired bootstrap on the same tasks. `rollouts`: training episodes spent (H0 + "
        "rescue/resample).",
        "",
        *notes,
        "",
        "## Held-out success in H0 (%)",
        "",
        *_tables(result),
        "",
        *evidence_sections(result),
        "## Diagnostic: all-failed groups under H0 and the share rescued",
        "",
        *_diagnostic_lines(result, out),
        "",
        "## Behaviour in H0 on the test tasks, before (start) and after training",
        "",
        *_behaviour_lines(result),
        "",
        "## Each targeted failure code in H0, against the start",
        "",
        *_code_lines(result, out),
        "",
        "## Profile drift at each re-anchoring (router runs)",
        "",
        *_drift_lines(result, out),
        "",
        "## Plots",
        "",
        *draw_plots(result, out),
        "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
