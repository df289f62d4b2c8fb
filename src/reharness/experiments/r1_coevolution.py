"""Co-evolution (Harness-R1's "after agent SFT" rows): does the engineer still help once the target itself has
been trained?

Two sets of ``experiment r1`` runs on the same test tasks (one ``--test-seed``): *before*, against the start
target, and *after*, against a trained one (``--agent hf:TRAINED``, e.g. a policy trained by ``train
policy`` or ``experiment s``), the engineer retrained against it. Run ``i`` of each set is paired with run
``i`` of the other (the same training seed). The records of a pair are merged with their methods
relabelled ``METHOD@before`` / ``METHOD@after``, so the comparisons are
:func:`reharness.experiments.r1_compare.pooled`'s, task by task over the shared test tasks:

- ``none@after − none@before``: what training the target bought on its own;
- ``M@before − none@before`` and ``M@after − none@after`` for the engineers: the gain of a patch before and
  after, each within its own target;
- ``M@after − M@before``: the patched targets against each other.

``python -m reharness.experiments.r1_coevolution --before R1_S2 R1_S3 --after R1T_S2 R1T_S3`` prints the
success table and the comparisons, reading only the runs' ``r1_config.json`` and ``eval.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from reharness.experiments.r1_compare import load_run, mean_success, pooled, table

#: the engineers compared before and after (those measured in both sets)
ENGINEERS: tuple[str, ...] = ("operators", "sft", "grpo", "prompted", "self-refine")
BEFORE, AFTER = "before", "after"


def merge(before: list[dict[str, Any]], after: list[dict[str, Any]], envs: list[str]) -> list[dict[str, Any]]:
    """One run's records of ``envs``, methods relabelled ``METHOD@before`` / ``METHOD@after`` (refused
    unless both measured the same test batches: same batch seeds)."""
    seeds = [
        {(r["env"], r["batch"]): r["seed"] for r in records if r["env"] in envs}
        for records in (before, after)
    ]
    shared = set(seeds[0]) & set(seeds[1])
    if not shared or any(seeds[0][key] != seeds[1][key] for key in shared):
        raise ValueError(
            "the before and after runs were evaluated on different test batches "
            "(give both the same --test-seed and --batch-size)"
        )
    return [
        r | {"method": f"{r['method']}@{tag}"}
        for tag, records in ((BEFORE, before), (AFTER, after))
        for r in records
        if r["env"] in envs and (r["env"], r["batch"]) in shared
    ]


def pairs_of(methods: set[str]) -> tuple[tuple[str, str], ...]:
    """The comparisons (see the module docstring) among the methods measured in both sets."""
    out = [(f"none@{AFTER}", f"none@{BEFORE}")]
    for method in ENGINEERS:
        if f"{method}@{BEFORE}" in methods and f"{method}@{AFTER}" in methods:
            out += [
                (f"{method}@{BEFORE}", f"none@{BEFORE}"),
                (f"{method}@{AFTER}", f"none@{AFTER}"),
                (f"{method}@{AFTER}", f"{method}@{BEFORE}"),
            ]
    return tuple(out)


def coevolution(before: list[Path], after: list[Path], seed: int = 0) -> dict[str, Any]:
    """Success per (method, env) before and after (mean over the runs) and the pooled paired comparisons."""
    if not before or len(before) != len(after):
        raise ValueError("give as many --after runs as --before runs (run i of each is one training seed)")
    loaded = [(load_run(b), load_run(a)) for b, a in zip(before, after, strict=True)]
    envs = [env for env in loaded[0][1][0] if env in loaded[0][0][0]]
    if not envs:
        raise ValueError("the before and after runs share no environment")
    runs = [merge(b[1], a[1], envs) for b, a in loaded]
    methods = set.intersection(*({r["method"] for r in records} for records in runs))
    success = {m: {env: round(mean_success(runs, m, env), 6) for env in envs} for m in sorted(methods)}
    return {
        "envs": envs,
        "success": success,
        "comparisons": pooled(runs, envs, seed=seed, pairs=pairs_of(methods)),
    }


def summary(result: dict[str, Any]) -> list[str]:
    """The Markdown of :func:`coevolution`."""
    envs: list[str] = result["envs"]
    lines = ["| method | target | " + " | ".join(envs) + " |", "|---|---|" + "---|" * len(envs)]
    names = sorted({m.split("@")[0] for m in result["success"]}, key=lambda m: (m != "none", m))
    for name in names:
        for tag in (BEFORE, AFTER):
            row = result["success"].get(f"{name}@{tag}")
            if row is not None:
                cells = " | ".join(f"{100 * row[env]:.1f}" for env in envs)
                lines.append(f"| {name} | {tag} | {cells} |")
    return [*lines, "", *table(result["comparisons"])]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m reharness.experiments.r1_coevolution", description=__doc__
    )
    parser.add_argument("--before", nargs="+", type=Path, required=True, help="r1 runs of the start target")
    parser.add_argument("--after", nargs="+", type=Path, required=True, help="r1 runs of the trained target")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        result = coevolution(args.before, args.after)
    except (ValueError, OSError) as exc:
        parser.exit(2, f"error: {exc}\n")
    print(json.dumps(result) if args.json else "\n".join(summary(result)))


if __name__ == "__main__":
    main()
