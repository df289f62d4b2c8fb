"""Two arms of stored ``reharness experiment s`` runs compared on their shared test tasks, from files only.

An ablation is a second run that changes one option (``--rewritten-turns executed`` against the default
``mask``; ``--reanchor-every 0`` against re-anchoring) with the same ``--test-seed`` and ``--test-n``, so its
policies met the same test tasks as the first run's. :func:`compare` reads both runs' ``s_config.json``,
``eval.jsonl`` and ``result.json`` (the layout :mod:`.s_seeds` reads), refuses arms evaluated on different
tasks, and gives: each arm's held-out success in H0 and its rate of episodes with a failure code the pool's
siblings target, the paired per-task difference (B − A) of both with a bootstrap interval over tasks (an
ordering only where it excludes 0, else ``tie``), the same for each targeted code that occurs (an
``executed`` ablation acts first on the code of the sibling that rewrites actions, such as
``invalid_action``), each arm's rescues during training, and the options in which the two runs differ —
so the reader sees what the comparison varies (and whether the training seed is among them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reharness.core.errors import DataError
from reharness.core.resume import other_options
from reharness.experiments.s_config import SConfig
from reharness.experiments.s_eval import with_targets
from reharness.experiments.s_evidence import CODE_WORDS, verdict_word
from reharness.experiments.s_seeds import code_hits, read_run

_NOT_AN_OPTION = {"out"}  # where a run was written, not what it trained


def _arm(directory: Path, env: str | None, method: str) -> dict[str, Any]:
    config, evals, result = read_run(directory)
    envs = list(config["envs"])
    if env is None:
        if len(envs) != 1:
            raise DataError(f"{directory} holds several envs {envs}", hint="name one with --env")
        env = envs[0]
    key = f"{env}/{method}"
    if key not in evals:
        known = ", ".join(sorted(evals))
        raise DataError(f"{directory} has no evaluated arm {key!r}", hint=f"its arms: {known}")
    targets = set((result.get("target_codes") or {}).get(env, []))
    record = evals[key]
    training = (result.get("training") or {}).get(env, {}).get(method) or {}
    learnable = (result.get("learnable") or {}).get(env, {}).get(method)
    return {
        "run": str(directory),
        "env": env,
        "key": key,
        "config": config,
        "targets": sorted(targets),
        "pairs": record["pairs"],
        "successes": [float(s) for s in record["successes"]],
        "codes": record["codes"],
        "targeted": with_targets(record, targets)["targeted"],
        "rescues": training.get("rescues"),
        "learnable": learnable,
    }


def _paired(
    a: list[float], b: list[float], seed: int, words: tuple[str, str] = ("better", "worse")
) -> dict[str, Any]:
    from reharness.measure.paired import bootstrap_ci

    diffs = [y - x for x, y in zip(a, b, strict=True)]
    low, high = bootstrap_ci(diffs, seed=seed)
    delta = round(sum(diffs) / len(diffs), 6)
    return {"delta": delta, "low": low, "high": high, "verdict": verdict_word(low, high, words)}


def compare(
    run_a: Path,
    method_a: str,
    run_b: Path,
    method_b: str | None = None,
    env: str | None = None,
    bootstrap_seed: int = 0,
) -> dict[str, Any]:
    """Arm ``method_b`` of ``run_b`` (default: the same method) against arm ``method_a`` of ``run_a``."""
    a = _arm(run_a, env, method_a)
    b = _arm(run_b, env, method_b or method_a)
    if a["env"] != b["env"]:
        raise DataError(
            f"{run_a} holds {a['env']} and {run_b} holds {b['env']}: an arm is compared with the same env's",
            hint="compare two runs of one env (name it with --env when a run holds several)",
        )
    if a["pairs"] != b["pairs"]:
        raise DataError(
            f"{a['key']} of {run_a} and {b['key']} of {run_b} were evaluated on different test tasks",
            hint="compare runs made with the same --test-seed and --test-n",
        )
    n = len(a["pairs"])
    if n == 0:
        raise DataError(f"{a['key']} of {run_a} was evaluated on no test task")
    # an option added after a run was written reads as its default there, as when the run is resumed
    changed = other_options(a["config"], b["config"], SConfig)
    differs = {name: list(pair) for name, pair in changed.items() if name not in _NOT_AN_OPTION}
    same_targets = a["targets"] == b["targets"]
    sides = {}
    for name, arm in (("a", a), ("b", b)):
        sides[name] = {
            "run": arm["run"],
            "key": arm["key"],
            "success": round(sum(arm["successes"]) / n, 6),
            "target_code_rate": round(sum(arm["targeted"]) / n, 6),
            "rescues": arm["rescues"],
            "learnable": arm["learnable"],
        }
    return {
        "n": n,
        "a": sides["a"],
        "b": sides["b"],
        "differs": differs,
        "target_codes": a["targets"] if same_targets else None,
        "success": _paired(a["successes"], b["successes"], bootstrap_seed),
        # the same codes must be targeted on both sides for their rates to be compared
        "target_code_rate": (
            _paired(a["targeted"], b["targeted"], bootstrap_seed, CODE_WORDS) if same_targets else None
        ),
        "codes": _per_code(a, b, n, bootstrap_seed) if same_targets else [],
    }


def _per_code(a: dict[str, Any], b: dict[str, Any], n: int, seed: int) -> list[dict[str, Any]]:
    """Each targeted code that occurs in either arm: both arms' rates and B − A paired per task."""
    rows = []
    for code in a["targets"]:
        hits_a, hits_b = code_hits(a, code), code_hits(b, code)
        if not any(hits_a) and not any(hits_b):
            continue
        rates = {"a": round(sum(hits_a) / n, 6), "b": round(sum(hits_b) / n, 6)}
        rows.append({"code": code, **rates, **_paired(hits_a, hits_b, seed, CODE_WORDS)})
    return rows
