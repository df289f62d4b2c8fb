"""Two-seed tables of `reharness experiment s` runs (each DIR holds a result.json).

python tables.py DIR_SEED0 DIR_SEED1 [...]
"""

import json
import sys
from pathlib import Path

runs = [json.loads((Path(d) / "result.json").read_text()) for d in sys.argv[1:]]
env = runs[0]["config"]["envs"][0]
methods = [r["method"] for r in runs[0]["rows"]]
head = " | ".join(f"seed {r['config']['seed']}: success (Δ vs start, CI), rollouts" for r in runs)
print(f"| {env} method | {head} | mean |")
print("|---" * (len(runs) + 2) + "|")
for m in methods:
    cells, values = [], []
    for run in runs:
        row = next((x for x in run["rows"] if x["method"] == m), None)
        if row is None:
            cells.append("–")
            continue
        values.append(row["success"])
        d = row["delta_vs_start"]
        cells.append(
            f"{100 * row['success']:.0f}% ({100 * d:+.0f}, [{100 * row['delta_low']:+.0f}, "
            f"{100 * row['delta_high']:+.0f}]), {row['rollouts']}"
        )
    mean = f"{100 * sum(values) / len(values):.1f}%" if len(values) == len(runs) else "–"
    print(f"| {m} | " + " | ".join(cells) + f" | {mean} |")
rank = [r["rank1"][0]["success"] for r in runs]
cells = " | ".join(f"{100 * v:.0f}%" for v in rank)
print(f"| router policy, Rank-1 routed | {cells} | {100 * sum(rank) / len(rank):.1f}% |")
