"""GRPO temperature study (household seed 0 train packets): groups with reward variance, valid samples and
distinct patches over the first 9 steps, from the three ``rewards.jsonl`` logs here.

Run: python docs/results/r1-programs/grpo-temperature/analyze.py
"""

import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
for name in ("unconstrained-07", "constrained-07", "constrained-12"):
    rows = [json.loads(line) for line in (HERE / f"{name}-rewards.jsonl").read_text().splitlines()]
    groups = defaultdict(list)
    for row in rows:
        groups[row["step"]].append(row)
    first = [groups[s] for s in sorted(groups)[:9]]
    varied = sum(len({r["delta"] if r["status"] == "ok" else 0.0 for r in g}) > 1 for g in first)
    valid = sum(r["status"] == "ok" for r in rows) / len(rows)
    patches = len({r["patch_id"] for r in rows if r["patch_id"]})
    print(f"{name}: variance {varied}/9, valid {valid:.0%}, {patches} patches in {len(rows)} samples")
