"""The SmolLM2-as-target table (issue 36), regenerated from stored files only.

Usage: python docs/results/smollm2/table.py [DIR ...]   (default: every ENV-sSEED folder next to this file)

Each folder holds `result.json` (the `improve` round), `base-outcomes.jsonl` (the base harness on the 50
held-out test tasks, one line per episode, written by outcomes.py) and `base-run.json` (that run's summary),
and, when a candidate was accepted, `patched-outcomes.jsonl` (the same tasks with the patch). When nothing was
accepted the deployed harness is the base harness, so the patched column equals the base one and Δ is 0 by
construction. Δ's interval is the paired percentile bootstrap of reharness (2,000 resamples, seed 0).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from reharness.measure.paired import bootstrap_ci

HERE = Path(__file__).resolve().parent


def read_outcomes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def row(folder: Path) -> dict:
    env, seed = re.fullmatch(r"(.+)-s(\d+)", folder.name).groups()  # type: ignore[union-attr]
    base = read_outcomes(folder / "base-outcomes.jsonl")
    improve = json.loads((folder / "result.json").read_text())
    accepted = [c for c in improve["candidates"] if c.get("accepted")]
    patched_path = folder / "patched-outcomes.jsonl"
    patched = read_outcomes(patched_path) if patched_path.exists() else base
    if accepted and not patched_path.exists():
        raise SystemExit(f"{folder}: a candidate was accepted but patched-outcomes.jsonl is missing")
    key = {(o["task_identity"], o["seed"]): o for o in patched}
    pairs = [(o, key[(o["task_identity"], o["seed"])]) for o in base]
    diffs = [float(p["success"]) - float(b["success"]) for b, p in pairs]
    low, high = bootstrap_ci(diffs)
    counted = Counter(code for o in base for code in set(o["failure_codes"]))
    codes = dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))
    run = json.loads((folder / "base-run.json").read_text())
    steps = sum(o["num_steps"] for o in base)
    mean_episode = sum(o["duration_s"] for o in base) / len(base)
    return {
        "env": env,
        "seed": int(seed),
        "n": len(base),
        "base_success": sum(o["success"] for o in base),
        "base_mean_score": round(sum(o["score"] for o in base) / len(base), 4),  # partial credit
        "failure_codes": {c: round(k / len(base), 2) for c, k in codes.items()},
        "candidates": len(improve["candidates"]),
        "valid_candidates": sum(1 for c in improve["candidates"] if c.get("valid")),
        "accepted": [c["id"] for c in accepted],
        "patched_success": sum(o["success"] for o in patched),
        "delta": round(sum(diffs) / len(diffs), 3),
        "ci": [low, high],
        "rescued": sum(1 for b, p in pairs if p["success"] and not b["success"]),
        "broken": sum(1 for b, p in pairs if b["success"] and not p["success"]),
        "episode_s": round(mean_episode, 1),
        "request_s": round(mean_episode * len(base) / steps, 2),
        "model_requests": run.get("model_requests"),
    }


def markdown(rows: list[dict]) -> str:
    lines = [
        "| env | seed | n | base success | failure codes (share of episodes) | improve: valid / candidates, "
        "accepted | after improve | Δ [95% CI] | rescued / broken | s per episode | "
        "s per request (8 in flight) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        codes = ", ".join(f"{c} {v:.0%}" for c, v in list(r["failure_codes"].items())[:5])
        accepted = ", ".join(r["accepted"]) or "none"
        lines.append(
            f"| {r['env']} | {r['seed']} | {r['n']} | {r['base_success']}/{r['n']} | {codes} | "
            f"{r['valid_candidates']} / {r['candidates']}, {accepted} | {r['patched_success']}/{r['n']} | "
            f"{r['delta']:+.2f} [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] | {r['rescued']} / {r['broken']} | "
            f"{r['episode_s']:.0f} | {r['request_s']:.1f} |"
        )
    return "\n".join(lines)


def main(folders: list[Path]) -> None:
    rows = [row(f) for f in folders]
    print(markdown(rows))
    print()
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    given = [Path(a) for a in sys.argv[1:]]
    found = sorted(p for p in HERE.iterdir() if p.is_dir() and (p / "base-outcomes.jsonl").exists())
    main(given or found)
