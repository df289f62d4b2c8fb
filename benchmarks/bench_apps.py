"""Speed of the ``apps`` env: env steps per second under the solver, and the cost of one code step.

``python benchmarks/bench_apps.py [--tasks 40] [--calls 200]`` prints JSON: solver episodes and env steps per
second (world build, confined interpreter start, the ground-truth program's API calls and grading included),
the latency of one code step in the confined interpreter (p50/p99: a step making one API call, and a step
making none) and the interpreter's start time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from reharness.core.sandbox.interpreter import ConfinedInterpreter
from reharness.envs import make_env


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    env = make_env("apps", split="test")
    steps, started = 0, time.perf_counter()
    for i in range(args.tasks):
        env.reset(seed=i, options={"task": i})
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(env.expert_action())
            steps, done = steps + 1, terminated or truncated
    solver_s = time.perf_counter() - started
    env.close()

    starts, api_step, bare_step = [], [], []
    interp = ConfinedInterpreter(lambda app, api, kw: {"ok": True, "result": {"app": app, "api": api}})
    for _ in range(5):
        t = time.perf_counter()
        interp.execute("pass")
        starts.append(time.perf_counter() - t)
        interp.reset()
    interp.execute("x = 0")
    for _ in range(args.calls):
        t = time.perf_counter()
        interp.execute("x += 1\nr = apis.notes.show_notes(access_token='t')")
        api_step.append(time.perf_counter() - t)
        t = time.perf_counter()
        interp.execute("x += 1")
        bare_step.append(time.perf_counter() - t)
    interp.close()
    ms = 1000.0
    print(
        json.dumps(
            {
                "solver_episodes_per_s": round(args.tasks / solver_s, 2),
                "env_steps_per_s": round(steps / solver_s, 2),
                "code_step_with_api_call_ms": {
                    "p50": round(statistics.median(api_step) * ms, 3),
                    "p99": round(percentile(api_step, 0.99) * ms, 3),
                },
                "code_step_ms": {
                    "p50": round(statistics.median(bare_step) * ms, 3),
                    "p99": round(percentile(bare_step, 0.99) * ms, 3),
                },
                "interpreter_start_ms": round(statistics.median(starts) * ms, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
