"""Paired comparisons of ``reharness experiment r1``'s methods: Δ success with a 95 % bootstrap interval.

Every method is measured on the same test batches (the same tasks and seeds), so two methods are compared
task by task: per environment, the differences of their per-task outcomes (``successes`` of each record in
``eval.jsonl``, the baseline's task order) over all test batches; on the average, the differences of every
environment's tasks together (each environment has ``test_batches × batch_size`` tasks, so their mean is the
mean of the environments' means). The interval is :func:`reharness.measure.paired.bootstrap_ci` (percentile,
resampling tasks, seeded). An ordering is stated only where the interval excludes 0 (``verdict``: ``a > b``
or ``a < b``); otherwise the verdict is ``tie``. The records hold every task's outcome, so the comparisons
recompute from the stored files alone (:func:`comparisons`).

Several training seeds evaluated on the same test tasks (``experiment r1 --seed S --test-seed T``, one ``T``)
are compared by :func:`pooled`: per task, the mean over the runs of a − b; the interval resamples the shared
tasks. ``python -m reharness.experiments.r1_compare OUT1 OUT2 …`` prints the success per method (mean over
the runs) and the pooled comparisons, reading only the runs' ``r1_config.json`` and ``eval.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

#: (a, b) pairs compared: GRPO against SFT and the teacher (the paper's claims), then the controls
PAIRS: tuple[tuple[str, str], ...] = (
    ("grpo", "sft"),
    ("grpo", "operators"),
    ("sft", "operators"),
    ("grpo", "grpo-shuffled"),
    ("grpo", "best-of-n"),
    ("sft", "grpo-shuffled"),
    ("placebo", "none"),
    ("placebo-text", "none"),
    ("self-refine", "none"),
    ("self-refine", "placebo-text"),
    ("grpo", "prompted"),
    ("prompted", "none"),
    ("prompted", "self-refine"),
)
AVERAGE = "average"


def _outcomes(records: list[dict[str, Any]], method: str, env: str) -> dict[int, list[float]]:
    return {r["batch"]: r["successes"] for r in records if r["method"] == method and r["env"] == env}


def paired_diffs(records: list[dict[str, Any]], a: str, b: str, env: str) -> list[float]:
    """Per-task differences a − b over the test batches of ``env`` both methods were measured on."""
    ours, theirs = _outcomes(records, a, env), _outcomes(records, b, env)
    diffs: list[float] = []
    for batch in sorted(set(ours) & set(theirs)):
        if len(ours[batch]) != len(theirs[batch]):
            raise ValueError(f"{env} test batch {batch}: {a} and {b} were measured on different tasks")
        diffs += [x - y for x, y in zip(ours[batch], theirs[batch], strict=True)]
    return diffs


def verdict(a: str, b: str, low: float, high: float) -> str:
    """``a > b`` or ``a < b`` where the interval excludes 0, else ``tie``."""
    return f"{a} > {b}" if low > 0 else f"{a} < {b}" if high < 0 else "tie"


def compare(diffs: list[float], a: str, b: str, env: str, seed: int) -> dict[str, Any]:
    from reharness.measure.paired import bootstrap_ci

    low, high = bootstrap_ci(diffs, seed=seed)
    delta = round(sum(diffs) / len(diffs), 6) if diffs else 0.0
    return {
        "a": a,
        "b": b,
        "env": env,
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "n": len(diffs),
        "verdict": verdict(a, b, low, high),
    }


def comparisons(
    records: list[dict[str, Any]], envs: list[str], seed: int = 0, pairs: tuple[tuple[str, str], ...] = PAIRS
) -> list[dict[str, Any]]:
    """Every pair of ``pairs`` whose methods were both measured: per environment, then on the average."""
    measured = {r["method"] for r in records}
    out = []
    for a, b in pairs:
        if a not in measured or b not in measured:
            continue
        per_env = {env: paired_diffs(records, a, b, env) for env in envs}
        out += [compare(per_env[env], a, b, env, seed) for env in envs]
        out.append(compare([d for env in envs for d in per_env[env]], a, b, AVERAGE, seed))
    return out


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The Markdown table of :func:`comparisons` (percentage points)."""
    lines = ["| a − b | env | Δ success (pp) [95% CI] | tasks | verdict |", "|---|---|---|---|---|"]
    for c in rows:
        span = f"{100 * c['delta']:+.1f} [{100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}]"
        lines.append(f"| {c['a']} − {c['b']} | {c['env']} | {span} | {c['n']} | {c['verdict']} |")
    return lines


def pooled(
    runs: list[list[dict[str, Any]]],
    envs: list[str],
    seed: int = 0,
    pairs: tuple[tuple[str, str], ...] = PAIRS,
) -> list[dict[str, Any]]:
    """:func:`comparisons` over several runs on the same test tasks: per task, a − b averaged over the runs
    (refused unless every run measured the same batches: same batch seeds)."""
    tasks = [{(r["env"], r["batch"]): r["seed"] for r in records} for records in runs]
    if any(t != tasks[0] for t in tasks[1:]):
        raise ValueError("the runs were evaluated on different test batches (give them one --test-seed)")
    measured = set.intersection(*({r["method"] for r in records} for records in runs))
    out = []
    for a, b in pairs:
        if a not in measured or b not in measured:
            continue
        per_env: dict[str, list[float]] = {}
        for env in envs:
            diffs = [paired_diffs(records, a, b, env) for records in runs]
            per_env[env] = [sum(values) / len(values) for values in zip(*diffs, strict=True)]
        out += [compare(per_env[env], a, b, env, seed) for env in envs]
        out.append(compare([d for env in envs for d in per_env[env]], a, b, AVERAGE, seed))
    return out


def load_run(out: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """The environments (``r1_config.json``) and the evaluation records (``eval.jsonl``) of a stored run."""
    from reharness.core.jsonl import read_jsonl

    config = json.loads((out / "r1_config.json").read_text(encoding="utf-8"))
    return list(config["envs"]), list(read_jsonl(out / "eval.jsonl"))


def mean_success(runs: list[list[dict[str, Any]]], method: str, env: str) -> float:
    """The success rate of ``method`` on ``env`` over every task of every run."""
    values = [v for records in runs for r in records if r["method"] == method and r["env"] == env
              for v in r["successes"]]  # fmt: skip
    return sum(values) / max(1, len(values))


def summary(outs: list[Path]) -> list[str]:
    """The Markdown of several runs: success per method and environment (mean over the runs), then the
    pooled paired comparisons."""
    envs = load_run(outs[0])[0]
    runs = [load_run(out)[1] for out in outs]
    methods = list(dict.fromkeys(r["method"] for r in runs[0]))
    lines = [
        f"Runs: {', '.join(str(o) for o in outs)}",
        "",
        "| method | " + " | ".join(envs) + " | average |",
    ]
    lines.append("|---|" + "---|" * (len(envs) + 1))
    for method in methods:
        cells = [mean_success(runs, method, env) for env in envs]
        row = " | ".join(f"{100 * c:.1f}" for c in cells)
        lines.append(f"| {method} | {row} | {100 * sum(cells) / len(cells):.1f} |")
    return [*lines, "", *table(pooled(runs, envs, seed=0))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m reharness.experiments.r1_compare", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path, help="experiment r1 output directories (one test seed)")
    args = parser.parse_args(argv)
    try:
        lines = summary(args.runs)
    except (ValueError, OSError) as exc:
        parser.exit(2, f"error: {exc}\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
