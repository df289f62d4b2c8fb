"""Speed and scripted-agent success of the real-benchmark kits (the eight twx-* games, scienceworld, bfcl).

``python benchmarks/bench_kits.py [--tasks 100] [--seeds 0 1] [--kits ...]`` prints one JSON line per kit:
environment construction time (JVM or confined worker start), episode starts per second (``reset`` on the
test tasks), the gold-path solver's success and steps/s on ``--tasks`` test tasks, and a random agent's
success and steps/s per seed (uniform over the valid actions, seeded; BFCL: uniform over the gold calls of
*all* turns of the scenario plus ``end_turn``, a strong random baseline since it only needs the order).

For ScienceWorld it also compares, side by side on the same action sequences, the package's own ``step()``
(which rebuilds the valid action list after every action; its own JVM) with the kit's step and the raw JAR
``step`` call on the kit's JVM (what the kit adds over the JAR). The machine's load moves these by 2x between
runs; compare within one run.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from reharness.envs import make_env
from reharness.kits.registration import register_kit_envs

TWX_EXTRA = ("twx-mapreader", "twx-arithmetic", "twx-sorting", "twx-simonsays", "twx-peckingorder")
KITS = ("twx-twc", "twx-cookingworld", "twx-coin", *TWX_EXTRA, "scienceworld", "bfcl")


def play(env: Any, index: int, choose: Any) -> tuple[bool, int]:
    env.reset(seed=index, options={"task": index})
    steps = 0
    while True:
        _, _, terminated, truncated, info = env.step(choose())
        steps += 1
        if terminated or truncated:
            return bool(info["success"]), steps


def measure(env: Any, indices: list[int], choose: Any) -> dict[str, float]:
    wins = steps = 0
    play_s = 0.0
    for index in indices:
        started = time.perf_counter()
        won, taken = play(env, index, choose)
        play_s += time.perf_counter() - started
        wins, steps = wins + won, steps + taken
    return {"success": wins / len(indices), "steps": steps, "steps_per_s": round(steps / play_s, 1)}


def random_chooser(env: Any, rng: random.Random, name: str) -> Any:
    return lambda: env.random_action(rng)


def bench_kit(name: str, tasks: int, seeds: list[int]) -> dict[str, Any]:
    started = time.perf_counter()
    options: dict[str, Any] = {"max_steps": 1000} if name == "scienceworld" else {}
    env = make_env(name, split="test", **options)
    start_s = time.perf_counter() - started
    indices = random.Random(0).sample(range(env.num_tasks()), min(tasks, env.num_tasks()))
    started = time.perf_counter()
    for index in indices:
        env.reset(seed=index, options={"task": index})
    starts_per_s = len(indices) / (time.perf_counter() - started)
    row: dict[str, Any] = {
        "kit": name,
        "env_start_s": round(start_s, 2),
        "episode_starts_per_s": round(starts_per_s, 1),
    }
    row["solver"] = measure(env, indices, env.expert_action)
    random_tasks = indices if name != "scienceworld" else indices[: max(1, tasks // 5)]
    env.max_steps = 30 if name == "scienceworld" else env.max_steps  # the valid list costs ~0.1 s a step
    row["random"] = {
        f"seed{seed}": measure(env, random_tasks, random_chooser(env, random.Random(seed), name))
        for seed in seeds
    }
    if name == "scienceworld":
        row["step_comparison"] = compare_scienceworld(env)
    env.close()
    return row


def compare_scienceworld(env: Any, steps: int = 60) -> dict[str, float]:
    """Steps/s of the package's step(), the kit's step and the raw JAR call, on the same action sequences
    (each JVM warmed on the sequence first: the kit's JVM has already played the other measurements)."""
    from scienceworld import ScienceWorldEnv

    package = ScienceWorldEnv("", envStepLimit=10**9)
    rates: dict[str, list[float]] = {"package_step": [], "kit_step": [], "raw_jar_step": []}
    rng = random.Random(0)
    for index in (0, 300, 900):
        task = env.generate_task("test", index)
        env.reset(options={"task": index})
        pool = [a for a in env.valid_actions() if not a.startswith(("focus", "wait"))]
        sequence = [rng.choice(pool + ["look around", "inventory"]) for _ in range(steps)]
        name, variation = task.state["task"], task.state["variation"]
        runners = {
            "package_step": lambda a: package.step(a),
            "kit_step": lambda a: env.step(a),
            "raw_jar_step": lambda a: env.server.step(a),  # the kit's own JVM: the kit's overhead shows
        }
        for timed in (False, True):  # the first pass warms both JVMs' JIT on this task; the second is timed
            for label, run in runners.items():
                package.load(name, variation, "")
                env.reset(options={"task": index})
                env.max_steps = 10**6
                started = time.perf_counter()
                for action in sequence:
                    run(action)
                if timed:
                    rates[label].append(steps / (time.perf_counter() - started))
    package.close()
    result = {k: round(sum(v) / len(v), 1) for k, v in rates.items()}
    result["kit_over_package"] = round(result["kit_step"] / result["package_step"], 1)
    return result


def bench_bfcl_categories(seeds: list[int]) -> list[dict[str, Any]]:
    """BFCL per category, every scenario of every split: the gold calls replayed through the kit and graded
    by BFCL's own checker, and the random agent (its test split only)."""
    from reharness.kits.bfcl.data import CATEGORIES

    rows = []
    for category in CATEGORIES:
        gold = {"success": 0, "tasks": 0, "steps": 0}
        random_rows: dict[str, Any] = {}
        play_s = 0.0
        for split in ("train", "valid", "test"):
            env = make_env("bfcl", split=split, category=category)
            indices = list(range(env.num_tasks()))
            started = time.perf_counter()
            solved = measure(env, indices, env.expert_action)
            play_s += time.perf_counter() - started
            gold["success"] += round(solved["success"] * len(indices))
            gold["tasks"] += len(indices)
            gold["steps"] += int(solved["steps"])
            if split == "test":
                random_rows = {
                    f"seed{seed}": measure(env, indices, random_chooser(env, random.Random(seed), "bfcl"))
                    for seed in seeds
                }
            env.close()
        rows.append(
            {
                "kit": f"bfcl/{category}",
                "gold_replay": f"{gold['success']}/{gold['tasks']}",
                "gold_steps_per_s": round(gold["steps"] / play_s, 1),
                "random_test": random_rows,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--kits", nargs="+", default=list(KITS), choices=KITS)
    parser.add_argument(
        "--bfcl-categories", action="store_true", help="BFCL only: every category, every scenario"
    )
    args = parser.parse_args()
    register_kit_envs()
    if args.bfcl_categories:
        for row in bench_bfcl_categories(args.seeds):
            print(json.dumps(row), flush=True)
        return
    for name in args.kits:
        print(json.dumps(bench_kit(name, args.tasks, args.seeds)), flush=True)


if __name__ == "__main__":
    main()
