"""Several training seeds of ``reharness experiment s`` in one table, computed from their stored files only.

Each directory is one training seed's run (the same options except ``--seed``, and one shared fresh
``--test-seed``, so every seed's policies met the same test tasks). :func:`pooled` reads each run's
``s_config.json``, ``eval.jsonl`` (per-task outcomes and failure codes in H0) and ``result.json`` (the
targeted codes and compute), refuses runs that were not evaluated on the same tasks, and gives per env and
method: the mean success over seeds, each seed's success, the targeted-code rate, tokens and model calls, and
the paired difference from ``none``, ``resample`` and ``start``: per test task the mean over seeds of the
difference, with a bootstrap interval that resamples tasks (the unit the seeds share). The ``rank1`` row (the
router policy served by Rank-1 routing, an inference-time arm: no targeted-code rate, no training compute)
is also compared with ``router``, the same policy in H0. An ordering is stated only where the interval
excludes 0; otherwise the verdict is ``tie``. :func:`code_rows` splits the targeted-code rate into each code
the pool's siblings target (``invalid_action`` for an action-validity sibling, ...): its rate per episode in
H0 for every policy, paired against the start policy and against ``none`` per task the same way.
:func:`rescue_rows` adds, from the training runs' metrics, how many all-failed groups each rescuing arm
turned into groups with a success, against fresh H0 samples (``resample``) and a placebo sibling.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.core.errors import DataError
from reharness.core.jsonl import read_jsonl
from reharness.experiments.s_config import START
from reharness.experiments.s_eval import RANK1
from reharness.experiments.s_evidence import CODE_WORDS, verdict_word

Run = tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]]


def read_run(directory: Path) -> Run:
    """A finished run's ``s_config.json``, ``eval.jsonl`` records by key, and ``result.json``."""
    files = [directory / name for name in ("s_config.json", "eval.jsonl", "result.json")]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise DataError(
            f"{directory} is not a finished experiment s run: {', '.join(missing)} missing",
            hint="rerun its experiment s command: it resumes, and writes them once every arm is evaluated",
        )
    config = json.loads(files[0].read_text(encoding="utf-8"))
    evals = {r["key"]: r for r in read_jsonl(files[1])}
    return config, evals, json.loads(files[2].read_text(encoding="utf-8"))


def pooled(directories: list[Path], bootstrap_seed: int = 0) -> dict[str, Any]:
    """The pooled table of several seeds' runs (see the module docstring)."""
    from reharness.measure.paired import bootstrap_ci

    runs = [read_run(d) for d in directories]
    seeds = [c["seed"] for c, _, _ in runs]
    if len(set(seeds)) != len(seeds):
        raise DataError(f"the runs repeat a training seed: {seeds}", hint="pass one run per training seed")
    rows: list[dict[str, Any]] = []
    for env in runs[0][0]["envs"]:
        keys = [k for k in runs[0][1] if k.startswith(f"{env}/")]
        for key in keys:
            method = key.split("/", 1)[1]
            per_seed = [evals[key] for _, evals, _ in runs if key in evals]
            if len(per_seed) < len(runs):
                continue
            pairs = per_seed[0]["pairs"]
            if any(r["pairs"] != pairs for r in per_seed):
                raise DataError(
                    f"{key}: the runs were evaluated on different test tasks",
                    hint="run every seed with the same --test-seed and --test-n",
                )
            # each run's result row of this method (rank1 has none: it trains nothing)
            trained = [
                r for _, _, res in runs for r in res["rows"] if r["env"] == env and r["method"] == method
            ]
            row: dict[str, Any] = {
                "env": env,
                "method": method,
                "seeds": seeds,
                "n": len(pairs),
                "success": round(sum(sum(r["successes"]) for r in per_seed) / (len(pairs) * len(runs)), 6),
                "per_seed": [round(sum(r["successes"]) / len(pairs), 6) for r in per_seed],
                "target_code_rate": round(sum(x.get("target_code_rate", 0.0) for x in trained) / len(runs), 6)
                if len(trained) == len(runs)
                else None,
                "tokens": sum(int(x.get("tokens", 0)) for x in trained),
                "model_calls": sum(int(x.get("model_calls", 0)) for x in trained),
            }
            for other in ("start", "none", "resample", *(("router",) if method == "rank1" else ())):
                base = [evals[f"{env}/{other}"] for _, evals, _ in runs if f"{env}/{other}" in evals]
                if other == method or len(base) < len(runs):
                    continue
                diffs = [
                    sum(r["successes"][i] - b["successes"][i] for r, b in zip(per_seed, base, strict=True))
                    / len(runs)
                    for i in range(len(pairs))
                ]
                low, high = bootstrap_ci(diffs, seed=bootstrap_seed)
                row[f"vs_{other}"] = {
                    "delta": round(sum(diffs) / len(diffs), 6), "low": low, "high": high,
                    "verdict": verdict_word(low, high),
                }  # fmt: skip
            rows.append(row)
    envs = runs[0][0]["envs"]
    codes = [r for env in envs for r in code_rows(runs, env, bootstrap_seed)]
    rescues = [r for env in envs for r in rescue_rows(directories, env, bootstrap_seed)]
    runs_out = [str(d) for d in directories]
    return {"runs": runs_out, "seeds": seeds, "rows": rows, "codes": codes, "rescues": rescues}


def code_hits(record: dict[str, Any], code: str) -> list[float]:
    """Per test episode of an evaluation record, 1.0 where its failure codes hold ``code``."""
    return [float(code in codes) for codes in record["codes"]]


def code_rows(runs: list[Run], env: str, bootstrap_seed: int = 0) -> list[dict[str, Any]]:
    """Per policy evaluated in H0 (not Rank-1, which runs in the siblings' harnesses) and per failure code
    the pool's siblings target: the share of test episodes whose failure codes hold it, pooled over the seeds
    and per seed, and its paired difference from the start policy and from ``none`` (policy-only training;
    per task the mean over seeds, a bootstrap over tasks; ``more``/``fewer`` only where the interval excludes
    0). A targeted code no episode of the env shows (``invalid_action`` where every action is admissible)
    gets no row; nothing where the runs' pools target different codes (their rates would not describe one
    pool)."""
    from reharness.measure.paired import bootstrap_ci

    targets = [sorted((result.get("target_codes") or {}).get(env, [])) for _, _, result in runs]
    if any(t != targets[0] for t in targets):
        return []
    bases = {other: [evals.get(f"{env}/{other}") for _, evals, _ in runs] for other in (START, "none")}
    records = [r for _, evals, _ in runs for k, r in evals.items() if k.startswith(f"{env}/")]
    seen = [code for code in targets[0] if any(code in codes for r in records for codes in r["codes"])]
    rows: list[dict[str, Any]] = []
    for key in runs[0][1]:
        method = key.split("/", 1)[1]
        per_seed = [evals[key] for _, evals, _ in runs if key in evals]
        if not key.startswith(f"{env}/") or method == RANK1 or len(per_seed) < len(runs):
            continue
        for code in seen:
            hits = [code_hits(r, code) for r in per_seed]
            n = len(hits[0])
            row: dict[str, Any] = {
                "env": env, "method": method, "code": code,
                "rate": round(sum(map(sum, hits)) / (n * len(hits)), 6),
                "per_seed": [round(sum(h) / n, 6) for h in hits],
            }  # fmt: skip
            for other, records_b in bases.items():
                if method in (START, other) or any(b is None for b in records_b):
                    continue
                base = [code_hits(b, code) for b in records_b if b is not None]
                pairs = list(zip(hits, base, strict=True))
                diffs = [sum(h[i] - b[i] for h, b in pairs) / len(pairs) for i in range(n)]
                low, high = bootstrap_ci(diffs, seed=bootstrap_seed)
                row[f"vs_{other}"] = {
                    "delta": round(sum(diffs) / n, 6), "low": low, "high": high,
                    "verdict": verdict_word(low, high, CODE_WORDS),
                }  # fmt: skip
            rows.append(row)
    return rows


#: The arms that re-sample an all-failed group (fresh H0 samples or a sibling), in table order.
RESCUING = ("resample", "random", "placebo", "vote", "router")


def rescue_rows(directories: list[Path], env: str, bootstrap_seed: int = 0) -> list[dict[str, Any]]:
    """Per rescuing arm, over the seeds' training runs: the all-failed groups it met, how many its rescue
    turned into a group with a success (``rescued``), the share per seed and pooled, and the share's
    difference from ``resample`` (fresh H0 samples: the equal-compute baseline) and from ``placebo`` (a
    sibling whose text says nothing): a bootstrap that resamples each arm's groups on its own (the arms met
    different groups, so nothing pairs them). Read from each arm's ``metrics.jsonl``."""
    from reharness.experiments.s_data import metrics
    from reharness.measure.paired import bootstrap_difference_ci

    outcomes: dict[str, list[list[float]]] = {}
    for method in RESCUING:
        runs = [metrics(d, env, method) for d in directories]  # [] where the arm was not trained
        per_seed = [
            [float(int(a.get("successes", 0)) > 0) for m in lines for a in m.get("rescues") or []]
            for lines in runs
        ]
        if all(runs) and any(per_seed):  # a seed whose groups never all failed counts none
            outcomes[method] = per_seed
    rows: list[dict[str, Any]] = []
    for method, per_seed in outcomes.items():
        groups = [x for seed in per_seed for x in seed]
        row: dict[str, Any] = {
            "env": env,
            "method": method,
            "groups": len(groups),
            "rescued": int(sum(groups)),
            "share": round(sum(groups) / len(groups), 6),
            "per_seed": [round(sum(seed) / len(seed), 6) if seed else None for seed in per_seed],
        }
        for other in ("resample", "placebo"):
            if other == method or other not in outcomes:
                continue
            base = [x for seed in outcomes[other] for x in seed]
            low, high = bootstrap_difference_ci(groups, base, seed=bootstrap_seed)
            row[f"vs_{other}"] = {
                "delta": round(row["share"] - sum(base) / len(base), 6), "low": low, "high": high,
                "verdict": verdict_word(low, high, ("more", "fewer")),
            }  # fmt: skip
        rows.append(row)
    return rows
