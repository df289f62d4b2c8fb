"""Benchmark: the ``code`` env's costs — env steps per second, one ``run_tests`` call, one graded submit.

Prints JSON with:
- ``steps_per_s``: solver episodes stepped directly on the env (view / str_replace / run_tests / submit mix),
  and ``tool_steps_per_s`` for the file tools alone (view, search, str_replace, insert: no subprocess);
- ``run_tests_s`` p50/p99: one confined test run of the whole suite (scratch copy + ``python -I -S -B`` +
  rlimits, Landlock, seccomp + unittest), and ``grade_s`` p50/p99: one submit (diff, fresh copy, F2P + P2P);
- the confinement layers the runner achieved.

Run: ``python benchmarks/bench_code_env.py [--episodes 10] [--runs 30]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from reharness.envs import make_env
from reharness.kits.code.protocol import Command, render
from reharness.kits.code.testrun import run_tests


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    env = make_env("code", split="test")

    steps, started = 0, time.perf_counter()
    for i in range(args.episodes):
        env.reset(seed=i, options={"task": i})
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(env.expert_action())
            steps += 1
            done = terminated or truncated
    steps_per_s = steps / (time.perf_counter() - started)

    env.reset(seed=0, options={"task": 0})
    assert env.workspace is not None
    path = next(p for p in sorted(env.workspace.files()) if p.endswith(".py") and "tests" not in p)
    tool_actions = [
        render(Command("view", path=path)),
        render(Command("search", pattern="def ", path=".")),
        render(Command("insert", path=path, line=0, new="# a")),
        render(Command("str_replace", path=path, old="# a\n", new="")),
    ]
    n, started = 0, time.perf_counter()
    for _ in range(50):
        for action in tool_actions:
            env.step(action)
            n += 1
            if env.done:
                env.reset(seed=0, options={"task": 0})
    tool_steps_per_s = n / (time.perf_counter() - started)

    files = env.workspace.files()
    caps = {}
    run_s: list[float] = []
    for _ in range(args.runs):
        t = time.perf_counter()
        run = run_tests(files)
        run_s.append(time.perf_counter() - t)
        caps = {k: run.caps.get(k) for k in ("landlock", "landlock_abi", "seccomp", "no_new_privs")}
    grade_s: list[float] = []
    for i in range(max(3, args.runs // 3)):
        env.reset(seed=i, options={"task": i})
        t = time.perf_counter()
        env.grade(env.target_files())
        grade_s.append(time.perf_counter() - t)
    env.close()
    print(
        json.dumps(
            {
                "steps_per_s": round(steps_per_s, 2),
                "tool_steps_per_s": round(tool_steps_per_s, 1),
                "run_tests_s": {
                    "p50": _pct(run_s, 0.5),
                    "p99": _pct(run_s, 0.99),
                    "mean": statistics.mean(run_s),
                },
                "grade_s": {"p50": _pct(grade_s, 0.5), "p99": _pct(grade_s, 0.99)},
                "confinement": caps,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
