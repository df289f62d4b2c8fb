"""Small Harness-S training comparison: train each method, evaluate every policy in H0 on test (greedy)."""

import json
import subprocess
import sys
import time
from pathlib import Path

env, pool, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
methods = sys.argv[4].split(",")
root = Path(f"exp-s/{env}")
root.mkdir(parents=True, exist_ok=True)
R = "reharness"
policies = {"start": f"tiny:{env}-S"}
for m in methods:
    out = root / m
    args = [
        R,
        "train",
        "policy",
        "--env",
        env,
        "--rescue",
        m,
        "--steps",
        str(steps),
        "--k",
        "8",
        "--tasks-per-step",
        "4",
        "--out",
        str(out),
        "--json",
        "--save-steps",
        "100",
    ]
    if m in ("router", "random"):
        args += ["--pool", pool]
    t = time.time()
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode:
        print(res.stderr[-3000:])
        sys.exit(1)
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    print(m, summary, round(time.time() - t), flush=True)
    policies[m] = f"hf:{summary['path']}"
for seed in (0, 1):
    for m, agent in policies.items():
        args = [
            R,
            "run",
            "--env",
            env,
            "--agent",
            agent,
            "--split",
            "test",
            "--n",
            "100",
            "--seed",
            str(seed),
            "--out",
            str(root / "eval"),
            "--json",
        ]
        res = subprocess.run(args, capture_output=True, text=True)
        d = json.loads(res.stdout.strip().splitlines()[-1])
        print("eval", seed, m, d["success_rate"], d["out"], flush=True)
