"""What ``reharness experiment s``'s report reads from the training runs: the per-step ``metrics.jsonl``
lines, the diagnostic over them (all-failed groups under H0, rescues per sibling) and the profile drift of
the router runs (the pool's ``profile.json``, each ``profiles/step-N.json``, then ``profiles/final.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SOLVED = "solved"  # the profile's cluster key of pairs H0 solved (not a rescue opportunity)


def metrics(out: Path, env: str, method: str) -> list[dict[str, Any]]:
    """The per-step lines of a training run's ``metrics.jsonl`` (re-anchoring lines included)."""
    file = out / env / method / "metrics.jsonl"
    if not file.is_file():
        return []
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def diagnostic(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Over a run's steps: groups, groups that all failed under H0, rescues tried/succeeded, per sibling."""
    steps = [m for m in lines if "groups" in m]
    groups = sum(int(m["groups"]) for m in steps)
    failed = sum(int(m["all_fail_groups"]) for m in steps)
    tried = sum(int(m.get("rescues_tried", 0)) for m in steps)
    succeeded = sum(int(m.get("rescues_succeeded", 0)) for m in steps)
    per: dict[str, dict[str, int]] = {}
    for m in steps:
        for name, cell in (m.get("per_sibling") or {}).items():
            mine = per.setdefault(name, {"tried": 0, "succeeded": 0, "audit_lost": 0})
            for key in mine:
                mine[key] += int(cell.get(key, 0))
    first = steps[0] if steps else {}
    return {
        "groups": groups,
        "all_fail": failed,
        "all_fail_share": failed / groups if groups else 0.0,
        "tried": tried,
        "succeeded": succeeded,
        "rescued_share": succeeded / failed if failed else 0.0,
        "per_sibling": per,
        "first_step": {k: first.get(k) for k in ("h0_success", "all_fail_groups", "groups")},
    }


def sibling_names(pool_dir: Path) -> dict[str, str]:
    file = pool_dir / "pool.json"
    if not file.is_file():
        return {}
    doc = json.loads(file.read_text(encoding="utf-8"))
    return {s["id"]: s["name"] for s in doc.get("siblings", [])}


def _profile_point(profile: dict[str, Any]) -> dict[str, Any]:
    """One anchor: each sibling's measured rescue rate over its cluster cells, H0's success, and the cells."""
    rates, cells = {}, {}
    for sid, clusters in (profile.get("cells") or {}).items():
        rescues = sum(int(c.get("rescues", 0)) for k, c in clusters.items() if k != SOLVED)
        failures = sum(int(c.get("h0_failures", 0)) for k, c in clusters.items() if k != SOLVED)
        rates[sid] = rescues / failures if failures else 0.0
        for key, cell in clusters.items():
            if key != SOLVED and cell.get("h0_failures"):
                cells[f"{sid}/{key}"] = int(cell.get("rescues", 0)) / int(cell["h0_failures"])
    h0 = (profile.get("h0") or {}).values()
    attempts = sum(int(c.get("attempts", 0)) for c in h0)
    h0_success = sum(int(c.get("successes", 0)) for c in h0) / attempts if attempts else None
    return {
        "rates": rates,
        "cells": cells,
        "h0_success": h0_success,
        "policy_hash": profile.get("policy_hash"),
        "temperature": profile.get("temperature"),
        "samples": profile.get("samples", 1),
    }


def drift(pool_dir: Path, run_dir: Path) -> list[dict[str, Any]]:
    """The pool's profile, each re-anchored one (``profiles/step-N.json``) and the trained policy's
    (``profiles/final.json``, the one Rank-1 reads), in that order, each with the drift from the previous
    anchor: the mean absolute change of the (sibling, cluster) rescue rates present in both (``None`` when
    they share none). ``same_way`` is false, and drift ``None``, where the previous anchor was measured
    another way (another temperature or sample count: a greedy pool profile against sampled re-anchors is a
    change of measurement, not of the policy).

    Each point's ``label`` says which anchor it is; ``step`` places it on the training axis (the pool's at 0,
    the final one at the run's ``steps``)."""
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import PROFILE_FILE, Profile, measured_temperature
    from reharness.training.policy_train import FINAL_PROFILE

    pool = load_pool(pool_dir) if (pool_dir / "pool.json").is_file() else None
    anchors = [(pool_dir / PROFILE_FILE, "pool")]
    anchors += [(f, "step") for f in sorted((run_dir / "profiles").glob("step-*.json"))]
    anchors.append((run_dir / "profiles" / FINAL_PROFILE, "final"))
    points: list[dict[str, Any]] = []
    for file, kind in anchors:
        if not file.is_file():
            continue
        profile = json.loads(file.read_text(encoding="utf-8"))
        point = _profile_point(profile)
        if pool is not None:  # an older profile ran at the pool's H0 sampling (the router's own rule)
            point["temperature"] = measured_temperature(Profile.model_validate(profile), pool)
        point["step"] = _anchor_step(file, kind, run_dir, points)
        point["label"] = _anchor_label(kind, point["step"], point)
        if points:
            before, now = points[-1], point
            same_way = (before["temperature"], before["samples"]) == (now["temperature"], now["samples"])
            shared = sorted(set(before["cells"]) & set(now["cells"]))
            moved = (
                sum(abs(now["cells"][k] - before["cells"][k]) for k in shared) / len(shared)
                if shared
                else None
            )
            point["drift"] = moved if same_way else None
            point["same_way"] = same_way
        points.append(point)
    return points


def _anchor_step(file: Path, kind: str, run_dir: Path, before: list[dict[str, Any]]) -> int:
    if kind == "pool":
        return 0
    if kind == "step":
        return int(file.stem.split("-")[1])
    config = run_dir / "train_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("steps", 0))
    return max((int(p["step"]) for p in before), default=0)


def _anchor_label(kind: str, step: int, point: dict[str, Any]) -> str:
    temperature = point["temperature"]
    how = (
        "temperature unknown"
        if temperature is None
        else "greedy"
        if temperature == 0
        else f"temperature {temperature:g}"
    )
    how += f", {point['samples']} sample{'s' if point['samples'] != 1 else ''} a task"
    where = {
        "pool": "the pool's profile",
        "step": f"step {step}",
        "final": f"after training, step {step}, Rank-1's profile",
    }
    return f"{where[kind]} ({how})"


def _rescues(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a | {"step": m["step"]} for m in lines if "groups" in m for a in m.get("rescues") or []]


def oracle_agreement(out: Path, env: str, methods: list[str], siblings: int) -> dict[str, dict[str, float]]:
    """How often each sibling-choosing method's rescue choice was a sibling known to rescue the task.

    The oracle's answer for a training task is the set of siblings that rescued it (≥ 1 audited success) in
    any attempt made by any of ``methods`` — the only attempts there are, so it is known only for tasks
    some attempt rescued, and it mixes policies (each method trains its own). Per method: ``decisions``,
    ``known`` (decisions on a task with a known rescuer), ``agreement`` (share of those whose choice is a
    rescuer) and ``random_agreement`` (what a uniform choice among the ``siblings`` would get on the same
    decisions). Every decision, with the oracle's answer, goes to ``OUT/ENV/oracle.jsonl``."""
    attempts = {m: _rescues(metrics(out, env, m)) for m in methods}
    rescuers: dict[int, set[str]] = {}
    for rows in attempts.values():
        for a in rows:
            if int(a.get("successes", 0)) > 0:
                rescuers.setdefault(int(a["task_index"]), set()).add(str(a["harness"]))
    result: dict[str, dict[str, float]] = {}
    lines = []
    for method, rows in attempts.items():
        known = agree = 0
        chance = 0.0
        for a in rows:
            oracle = sorted(rescuers.get(int(a["task_index"]), set()))
            hit = a["harness"] in oracle if oracle else None
            lines.append(
                {"method": method, "step": a["step"], "task_index": a["task_index"], "choice": a["harness"],
                 "oracle": oracle, "agrees": hit}
            )  # fmt: skip
            if oracle:
                known += 1
                agree += bool(hit)
                chance += len(oracle) / max(1, siblings)
        result[method] = {
            "decisions": len(rows),
            "known": known,
            "agreement": agree / known if known else 0.0,
            "random_agreement": chance / known if known else 0.0,
        }
    (out / env).mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    (out / env / "oracle.jsonl").write_text(text, encoding="utf-8")
    return result


def learnable(lines: list[dict[str, Any]]) -> dict[str, float]:
    """Rescued successes over a run, and the share whose every policy turn ran as sampled (no rewritten or
    forced turn): under ``--rewritten-turns mask`` only those teach the repair in H0."""
    successes = sum(int(m.get("rescued_successes", 0)) for m in lines if "groups" in m)
    rewritten = sum(int(m.get("rescued_with_rewrites", 0)) for m in lines if "groups" in m)
    return {
        "rescued_successes": successes,
        "with_rewrites": rewritten,
        "learnable_share": (successes - rewritten) / successes if successes else 0.0,
    }


def pool_costs(pool_dir: Path) -> dict[str, int]:
    """What the pool's evolution and profiling episodes cost, from the runs stored in its directory
    (zeros, ``stored_runs`` 0, for a pool given without its runs)."""
    from reharness.store.records import EpisodeRecord
    from reharness.training.reanchor import episode_costs

    files = sorted(pool_dir.glob("**/episodes.jsonl"))
    records = [
        EpisodeRecord.model_validate_json(line)
        for file in files
        for line in file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return episode_costs(records) | {"stored_runs": len(files)}
