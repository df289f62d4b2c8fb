"""Paired held-out table of the household training comparison (reads the eval runs named in log.txt)."""

import json
import sys
from pathlib import Path

from reharness.measure.paired import bootstrap_ci

log = Path(sys.argv[1]).read_text().splitlines()
runs = {}
for line in log:
    if line.startswith("eval"):
        _, seed, m, sr, out = line.split()
        text = (Path(out) / "episodes.jsonl").read_text().splitlines()
        eps = [json.loads(row) for row in text if row.strip()]
        eps.sort(key=lambda e: e["episode_index"])
        runs[(int(seed), m)] = eps
for seed in sorted({s for s, _ in runs}):
    base = runs.get((seed, "start"))
    for (s, m), eps in runs.items():
        if s != seed:
            continue
        succ = sum(e["success"] for e in eps) / len(eps)
        steps = [st for e in eps for st in e["steps"]]
        inval = sum("invalid_action" in st["flags"] for st in steps) / max(1, len(steps))
        rep = sum("repeated_action" in st["flags"] for st in steps) / max(1, len(steps))
        fmt = sum("format_error" in st["flags"] for st in steps) / max(1, len(steps))
        codes = {}
        for e in eps:
            for c in e.get("failure_codes", []):
                codes[c] = codes.get(c, 0) + 1
        line = f"seed {seed} {m:9s} success {succ:.2f}"
        if base is not None and m != "start":
            assert [e["task_identity"] for e in eps] == [e["task_identity"] for e in base]
            diffs = [float(p["success"]) - float(b["success"]) for b, p in zip(base, eps, strict=False)]
            lo, hi = bootstrap_ci(diffs, 2000, seed=0)
            line += f"  Δ {sum(diffs) / len(diffs):+.2f} [{lo:+.2f}, {hi:+.2f}]"
        line += f"  invalid {inval:.3f} repeat {rep:.3f} format {fmt:.3f}"
        line += f" steps/ep {len(steps) / len(eps):.1f} premature {codes.get('premature_answer', 0)}"
        print(line)
