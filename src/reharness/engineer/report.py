"""Reports of ``reharness improve``: the candidate table as CSV and the Markdown report.

Both are pure functions of the result (no wall-clock times), so the same run gives byte-identical files.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reharness.engineer.improve_result import CandidateRow, ImproveResult

CSV_COLUMNS = (
    "round",
    "id",
    "valid",
    "status",
    "accepted",
    "delta",
    "success_delta",
    "rescued",
    "broken",
    "ci_low",
    "ci_high",
    "effect_steps",
    "hook_errors",
    "model_calls",
    "reused_calls",
    "patch_id",
    "reason",
)


def candidates_csv(rows: Sequence[CandidateRow]) -> str:
    """The candidate table as CSV (one row per candidate, in round and proposal order)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        data = row.model_dump()
        writer.writerow(["" if data[c] is None else data[c] for c in CSV_COLUMNS])
    return buffer.getvalue()


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _cell(text: str | None, limit: int = 80) -> str:
    text = " ".join((text or "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_report(result: ImproveResult) -> str:
    """The Markdown report: configuration, rounds, candidates, accepted stack and held-out comparison."""
    c = result.config
    lines = [
        f"# reharness improve: {c.env} / {c.agent} / {c.engineer}",
        "",
        f"batch size {c.batch_size} (`{c.batch_split}` tasks), k {c.k}, rounds {c.rounds}, "
        f"max regressions {c.max_regressions}, "
        f"held-out {c.eval_n} `{c.eval_split}` tasks, seed {c.seed}"
        + (f", max steps {c.max_steps}" if c.max_steps else ""),
        "",
        "Δ_B is the mean over the whole batch of (patched − baseline) score on the same tasks and seeds; "
        "rescued / broken count tasks that flipped from failure to success and back. Invalid, degenerate "
        "(no hook effect), crashed or timed-out candidates score 0.",
        "",
        "## Rounds",
        "",
        "| round | batch | baseline success | failures | proposals (valid) | accepted |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for r in result.rounds:
        lines.append(
            f"| {r.round} | {r.batch_size} | {_pct(r.baseline_success)} | {r.failures} | "
            f"{r.proposals} ({r.valid_proposals}) | {r.accepted or '—'} |"
        )
    infra = [
        f"round {r.round} baseline: {r.policy_errors} policy, {r.env_errors} env"
        for r in result.rounds
        if r.policy_errors or r.env_errors
    ] + [
        f"{row.id}: {row.policy_errors} policy, {row.env_errors} env"
        for row in result.candidates
        if row.policy_errors or row.env_errors
    ]
    if infra:
        lines += [
            "",
            "Episodes that ended in infrastructure errors (the model server or the environment failed, not "
            "the agent): " + "; ".join(infra) + ". Rerun with `--retry-errors` to run them again.",
        ]
    lines += [
        "",
        "## Candidates",
        "",
        "| id | status | Δ_B | 95% CI | rescued | broken | effect steps | model calls (reused) | note |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for row in result.candidates:
        mark = " ✔" if row.accepted else ""
        note = row.reason if row.reason else row.description
        lines.append(
            f"| {row.id}{mark} | {row.status} | {row.delta:+.3f} | [{row.ci_low:+.3f}, {row.ci_high:+.3f}] | "
            f"{row.rescued} | {row.broken} | {row.effect_steps} | {row.model_calls} ({row.reused_calls}) | "
            f"{_cell(note)} |"
        )
    lines += ["", "## Accepted harness", ""]
    if result.stack:
        lines.append("Stacked overlays, in order (apply with `reharness run --patch FILE` for each):")
        lines.append("")
        lines += [f"{i}. `{path}`" for i, path in enumerate(result.stack, start=1)]
    else:
        lines.append("No candidate was accepted: the target keeps its unpatched harness.")
    lines += ["", "## Held-out evaluation", ""]
    h = result.heldout
    if h is None:
        lines.append("Not run (nothing accepted).")
    else:
        lines += [
            "| harness | success | mean score |",
            "|---|---:|---:|",
            f"| unpatched | {_pct(h.baseline_success)} | {h.baseline_score:.3f} |",
            f"| accepted | {_pct(h.patched_success)} | {h.patched_score:.3f} |",
            "",
            f"n = {h.n} paired tasks; success change {h.success_delta:+.3f} "
            f"(95% bootstrap CI [{h.success_ci_low:+.3f}, {h.success_ci_high:+.3f}], "
            f"{h.ci_resamples} paired resamples); score Δ {h.delta:+.3f} "
            f"([{h.ci_low:+.3f}, {h.ci_high:+.3f}]); rescued {len(h.rescued)}, broken {len(h.broken)}; "
            f"status {h.status}" + (f" ({h.reason})" if h.reason else "") + ".",
            "",
            f"Cost of the patched held-out run: {h.cost.model_calls} model calls, "
            f"{h.cost.reused_calls} reused from the baseline's prefix.",
        ]
    return "\n".join(lines) + "\n"
