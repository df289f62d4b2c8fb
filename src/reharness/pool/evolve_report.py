"""``report.md`` and ``coverage.png`` of ``reharness pool evolve``.

The coverage table crosses the H0 failure clusters of the ``valid`` split (one row per direction, plus the
union) with the admitted siblings: each cell is how many of that cluster's failed valid tasks the sibling
rescues. The heat map draws the same matrix with matplotlib when it is installed (the report says so when
it is not; the numbers never depend on it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reharness.pool.lineage import EvolveResult


def coverage_matrix(result: EvolveResult) -> tuple[list[str], list[str], list[list[int]], list[int]]:
    """(cluster rows, sibling columns, rescue counts, cluster sizes) on the valid split."""
    failed = [e for e in result.h0_valid.episodes if not e.success]
    rows = [d.name for d in result.pool.directions]
    clusters = {
        d.name: {e.task_id for e in failed if d.covers(e.failure_codes)} for d in result.pool.directions
    }
    clusters["any failure"] = {e.task_id for e in failed}
    rows.append("any failure")
    columns = [s.name for s in result.pool.siblings]
    matrix = [[len(clusters[r] & set(m.rescued)) for m in result.admitted] for r in rows]
    return rows, columns, matrix, [len(clusters[r]) for r in rows]


def render_report(result: EvolveResult, plot: str | None) -> str:
    c = result.pool.meta.get("evolve", {})
    pool = result.pool
    lines = [
        f"# reharness pool evolve: {pool.env} / {pool.policy.spec} / {c.get('engineer')}",
        "",
        f"H0 `{pool.h0_identity}`: train success {result.h0_train.result.success_rate:.1%} on "
        f"{len(result.h0_train.episodes)} tasks, valid success {result.h0_valid.result.success_rate:.1%} on "
        f"{len(result.h0_valid.episodes)} tasks. Directions: {', '.join(d.name for d in pool.directions)}"
        + (f" (held out: {c['holdout_direction']})" if c.get("holdout_direction") else "")
        + ".",
        "",
        "## Train clusters (H0 failures per direction)",
        "",
        "| direction | failed train tasks |",
        "|---|---|",
        *[f"| {name} | {len(ids)} |" for name, ids in result.clusters.items()],
        "",
        "## Candidates",
        "",
        "| id | origin | fitness | cluster rescued | broken | eligible |",
        "|---|---|---|---|---|---|",
        *[
            f"| {r['id']} | {r['origin']} | {r['fitness']:+g} | {len(r['cluster_rescued'])} | "
            f"{len(r['broken'])} | {'yes' if r['eligible'] else ''} |"
            for r in result.candidates
        ],
        "",
        "## Finalists on valid and the complementary pool",
        "",
        "| candidate | direction | valid success | rescued | broken | admitted |",
        "|---|---|---|---|---|---|",
    ]
    admitted = {id(m) for m in result.admitted}
    for m in result.finalists:
        lines.append(
            f"| {m.lineage.cid} | {m.lineage.direction} | {m.success:.1%} | {len(m.rescued)} | "
            f"{len(m.broken)} | {'yes' if id(m) in admitted else ''} |"
        )
    rows, columns, matrix, sizes = coverage_matrix(result)
    lines += ["", "## Coverage (valid H0 failures rescued, cluster × sibling)", ""]
    if columns:
        lines.append("| cluster (failed) | " + " | ".join(columns) + " |")
        lines.append("|---|" + "---|" * len(columns))
        for name, counts, size in zip(rows, matrix, sizes, strict=True):
            lines.append(f"| {name} ({size}) | " + " | ".join(str(v) for v in counts) + " |")
        lines += ["", f"![coverage]({plot})" if plot else "(heat map not drawn: matplotlib is not installed)"]
    else:
        lines.append("No sibling was admitted: no finalist rescued a valid H0 failure.")
    lines += ["", "## Siblings", ""]
    for s in pool.siblings:
        lines.append(f"- **{s.name}** `{s.id}` ({s.direction}): " + "; ".join(s.changes()))
    return "\n".join(lines) + "\n"


def draw_coverage(result: EvolveResult, path: Path) -> str | None:
    rows, columns, matrix, sizes = coverage_matrix(result)
    if not columns:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(max(4.0, 2.2 + 1.1 * len(columns)), 1.4 + 0.45 * len(rows)))
    shares = [[v / size if size else 0.0 for v in counts] for counts, size in zip(matrix, sizes, strict=True)]
    ax.imshow(shares, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), [f"{r} ({s})" for r, s in zip(rows, sizes, strict=True)], fontsize=8)
    for i, counts in enumerate(matrix):
        for j, v in enumerate(counts):
            color = "white" if shares[i][j] > 0.5 else "black"
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8, color=color)
    ax.set_title("valid H0 failures rescued", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name


def write_report(result: EvolveResult) -> Path:
    plot = draw_coverage(result, result.out / "coverage.png")
    path = result.out / "report.md"
    path.write_text(render_report(result, plot), encoding="utf-8")
    return path
