"""``reharness experiment s`` for real, micro: pool → GRPO with rescue → held-out evaluation → report.

The policy is a real Hugging Face chat model: a micro tiny agent trained for seconds on demonstrations of a
built-in env (the ``env`` fixture asks the registry which); it emits well-formed but useless actions,
so under H0 every group fails — the setup where only rescue can act. The pool is built the way
``tests/pool/pool_fixtures.py`` builds one: a sibling that is H0 plus a config delta (``show_admissible``),
with a validation profile, saved as a pool directory. The env's short step limit keeps every episode short.
The test checks the JSON contract, that every method has a row, that rescue happens (router tries a rescue
on every all-failed group and pays for it in rollouts), that re-anchoring writes a profile, the report and
its plots, and that a rerun reuses every training and evaluation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from s_runs import STORED_ENV, stored_run
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.core.errors import ConfigError, DataError
from reharness.experiments.s import SConfig
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
from reharness.pool.decision import read_log
from reharness.pool.pool import load_pool
from reharness.pool.profile import Profile, ProfileCell, pool_hash
from reharness.runtime import Harness, base_harness_config

METHODS = {"start", "none", "resample", "random", "placebo", "vote", "router"}
ROW_KEYS = {
    "method",
    "env",
    "success",
    "ci_low",
    "ci_high",
    "rollouts",
    "target_code_rate",
    "tokens",
    "model_calls",
}


@pytest.fixture(scope="module")
def env() -> str:
    """The built-in env the micro run trains on, asked of the registry rather than named: among the
    built-ins whose first observation lists admissible actions (the pool's one sibling shows that list),
    the one with the shortest episodes (the run's cost is its episodes). A fixture, so only the tests
    that run the micro pipeline build the envs, not every collection of this file."""
    from reharness.envs.registry import BUILTIN_KITS, make_env

    def listed(name: str) -> tuple[int, bool]:
        made = make_env(name)
        made.reset(seed=0)
        return made.max_steps, bool(made.admissible_actions())

    shapes = {name: listed(name) for name in BUILTIN_KITS}
    return min((name for name, (_, lists) in shapes.items() if lists), key=lambda name: shapes[name][0])


STEPS, K, TASKS = 2, 2, 1


def micro(env: str) -> list[str]:
    """The micro run's options on ``env``."""
    return [
        "--env", env, "--steps", str(STEPS), "--k", str(K), "--tasks-per-step", str(TASKS),
        "--test-n", "2", "--reanchor-every", "1", "--reanchor-n", "2", "--concurrency", "4",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def micro_policy(env: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    from reharness.models.tiny.config import recipe_for
    from reharness.training.tiny.train import train_agent

    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("policy") / f"{env}-micro"
    recipe = recipe_for(env, "micro").with_overrides(
        steps=40, batch_size=1, learning_rate=1e-2, split_spaces=False
    )
    train_agent(recipe, out, seed=0, dtype="float32")
    return out


@pytest.fixture(scope="module")
def micro_pool(env: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-sibling pool (H0 + the admissible-action list) with a profile that says it rescues."""
    h0 = base_harness_config(env)
    sibling = Sibling(
        name="listing",
        direction="action_validity",
        base=h0,
        delta={"show_admissible": True},
        description="list the admissible actions",
    )
    pool = Pool(env, h0, [sibling], PolicyRef(spec="micro"), builtin_directions())
    pool.save(tmp_path_factory.mktemp("pool") / f"pool-{env}")
    cell = ProfileCell(attempts=10, h0_failures=10, rescues=5, successes=5)
    Profile(
        pool_hash=pool_hash(pool),
        policy=PolicyRef(spec="micro"),
        policy_hash="p0",
        split="valid",
        tasks=[],
        cells={sibling.id: {"action_validity": cell, "loop_recovery": cell, "other": cell}},
    ).save(pool)
    assert pool.path is not None
    return pool.path


def test_experiment_s_micro_pipeline(env: str, micro_policy: Path, micro_pool: Path, tmp_path: Path) -> None:
    out = tmp_path / "s"
    args = ["experiment", "s", *micro(env), "--agent", f"hf:{micro_policy}", "--pool", str(micro_pool)]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    # the test episodes' progress bars
    assert f"eval {env}/start" in result.stderr and " eta " in result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"rows", "rank1", "average", "equal_rollouts"}
    assert all(set(r) == ROW_KEYS for r in data["rows"])
    rows = {r["method"]: r for r in data["rows"]}
    assert set(rows) == METHODS == set(data["average"])
    # every figure recomputes from the stored per-episode evaluation records
    evals = {r["method"]: r for r in map(json.loads, (out / "eval.jsonl").read_text().splitlines())}
    targeted = {"invalid_action", "format_error"}  # the sibling's direction, action_validity, targets these
    for method, row in rows.items():
        record = evals[method]
        assert row["env"] == env and record["n"] == 2 and len(record["successes"]) == 2
        assert row["success"] == pytest.approx(sum(record["successes"]) / 2) == data["average"][method]
        assert row["ci_low"] <= row["success"] <= row["ci_high"]
        hits = [bool(targeted & set(codes)) for codes in record["codes"]]
        assert row["target_code_rate"] == pytest.approx(sum(hits) / 2)
    [rank1] = data["rank1"]
    assert set(rank1) == {"env", "success", "ci_low", "ci_high"}
    assert rank1["success"] == pytest.approx(sum(evals["rank1"]["successes"]) / 2)
    # every evaluation of a trained policy ran in H0 (the pool's base harness), Rank-1 aside
    h0 = Harness(load_pool(micro_pool).h0).identity
    for method, record in evals.items():
        if method != "rank1":
            assert record["harness_ids"] == [h0], method
    # Rank-1 after training routes by the profile re-anchored on the trained router policy
    final = out / env / "router" / "profiles" / "final.json"
    assert evals["rank1"]["rank1_profile"] == str(final)
    trained_hash = json.loads(final.read_text())["policy_hash"]
    assert trained_hash != json.loads((micro_pool / "profile.json").read_text())["policy_hash"]

    # every H0 group failed, so every method but none paid K more rollouts per group: rescue happened
    per_step = TASKS * K
    assert rows["start"]["rollouts"] == 0 and rows["none"]["rollouts"] == STEPS * per_step
    for method in ("resample", "random", "placebo", "vote", "router"):
        assert rows[method]["rollouts"] == 2 * STEPS * per_step, method
    # tokens and model calls: the training rollouts' (per role) plus the routed methods' re-anchoring
    for method in METHODS - {"start"}:
        lines = [json.loads(x) for x in (out / env / method / "metrics.jsonl").read_text().splitlines()]
        summary = json.loads((out / env / method / "summary.json").read_text())
        rollout_tokens = sum(sum(m["costs"]["tokens"].values()) for m in lines)
        rollout_calls = sum(sum(m["costs"]["model_calls"].values()) for m in lines)
        reanchor = summary["costs"]["tokens"].get("reanchor", 0)
        assert rows[method]["tokens"] == rollout_tokens + reanchor > 0, method
        assert rows[method]["model_calls"] >= rollout_calls >= rows[method]["rollouts"], method
        assert (reanchor > 0) == (method in ("vote", "router")), method
    assert rows["start"]["tokens"] == rows["start"]["model_calls"] == 0
    [equal_row] = data["equal_rollouts"]  # none, trained on until its rollouts match router's
    assert equal_row["method"] == "none" and equal_row["rollouts"] == rows["router"]["rollouts"]
    router = json.loads((out / env / "router" / "summary.json").read_text())
    assert router["rescues"]["tried"] == STEPS * TASKS  # one routed rescue per all-failed group
    lines = [json.loads(x) for x in (out / env / "router" / "metrics.jsonl").read_text().splitlines()]
    assert [m["all_fail_groups"] for m in lines] == [TASKS] * STEPS
    assert all(m["per_sibling"]["listing"]["tried"] == TASKS for m in lines)
    # the routed methods re-anchored before step 1 and at step 1, at the rollout temperature, 2 samples
    for method in ("vote", "router"):
        for name in ("step-00000.json", "step-00001.json", "final.json"):
            profile = json.loads((out / env / method / "profiles" / name).read_text())
            assert (profile["temperature"], profile["samples"]) == (1.0, 2), (method, name)
    # vote: the judges voted on every decision; placebo: rescued under placebo siblings only
    votes = read_log(out / env / "vote" / "decisions.jsonl")
    assert len(votes) == STEPS * TASKS and all(d.strategy == "vote" and d.votes for d in votes)
    placebo = [json.loads(x) for x in (out / env / "placebo" / "metrics.jsonl").read_text().splitlines()]
    assert {r["name"] for m in placebo for r in m["rescues"]} <= {f"placebo-{i}" for i in range(4)}
    assert sum(len(m["rescues"]) for m in placebo) == STEPS * TASKS
    equal = json.loads((out / env / "none-equal-rollouts" / "summary.json").read_text())
    assert equal["steps"] == 2 * STEPS and equal["resumed_from"]  # forked from none's last checkpoint
    saved = json.loads((out / "result.json").read_text())
    oracle = saved["oracle"][env]
    assert set(oracle) == {"random", "vote", "router"}
    assert all(o["decisions"] == STEPS * TASKS for o in oracle.values())
    decisions = [json.loads(x) for x in (out / env / "oracle.jsonl").read_text().splitlines()]
    assert len(decisions) == 3 * STEPS * TASKS

    report = (out / "report.md").read_text()
    sections = (
        "## Held-out success in H0", "## Diagnostic", "## Behaviour in H0", "## Profile drift",
        "## Paired comparisons", "## Targeted failure codes", "## Compute per method", "## Router vs oracle",
        "## Rescued successes learnable", "## Each targeted failure code in H0",
    )  # fmt: skip
    for section in sections:
        assert section in report
    assert f"| {env} | router |" in report and "listing" in report
    # each targeted code the episodes show, per policy in H0 (not Rank-1), its rate recomputed from eval.jsonl
    shown = sorted(c for c in targeted if any(c in codes for r in evals.values() for codes in r["codes"]))
    assert shown, "the micro policy's test episodes show a targeted code"
    for method in METHODS | {"none-equal-rollouts"}:
        for code in shown:
            rate = 100 * sum(code in codes for codes in evals[method]["codes"]) / 2
            assert f"| {env} | {method} | {code} | {rate:.1f} |" in report, (method, code)
    assert not any(
        line.startswith(f"| {env} | rank1 | {code} |") for code in targeted for line in report.splitlines()
    )
    # profile drift: every anchor named, the trained policy's last; no drift across a change of measurement
    anchors = [line for line in report.splitlines() if line.startswith(f"- {env}, ")]
    sampled = "(temperature 1, 2 samples a task)"
    assert [line.split(":")[0] for line in anchors] == [
        f"- {env}, the pool's profile (greedy, 1 sample a task)",
        f"- {env}, step 0 {sampled}",
        f"- {env}, step 1 {sampled}",
        f"- {env}, after training, step 2, Rank-1's profile {sampled}",
    ]
    assert anchors[1].endswith("drift not measured (the anchor before was measured another way)")
    assert all(re.search(r"; drift \d\.\d{3}$", line) for line in anchors[2:]), anchors
    for plot in ("success_vs_rollouts", "rescue_rate", "profile_drift", "behaviour"):
        assert (out / f"{plot}.png").is_file(), plot
    assert (
        set(saved["behaviour"][env]) == METHODS | {"none-equal-rollouts"}  # the report keeps that row
        and "invalid_action/step" in saved["behaviour"][env]["start"]
    )

    # experiment s-compare reads the same stored files: router against none of this run, paired per task
    arms = ["--method", "none", "--method-b", "router"]
    compared = CliRunner().invoke(app, ["experiment", "s-compare", str(out), str(out), *arms, "--json"])
    assert compared.exit_code == 0, compared.output
    pair = json.loads(compared.stdout)
    assert pair["differs"] == {} and pair["target_codes"] == sorted(saved["target_codes"][env])
    assert pair["success"]["delta"] == pytest.approx(rows["router"]["success"] - rows["none"]["success"])
    assert pair["b"]["target_code_rate"] == pytest.approx(rows["router"]["target_code_rate"])
    assert pair["b"]["rescues"] == router["rescues"] and pair["a"]["rescues"]["tried"] == 0

    evaluations = (out / "eval.jsonl").read_text()
    models = {m: (out / env / m / "model").stat().st_mtime_ns for m in METHODS - {"start"}}
    again = CliRunner().invoke(app, [*args, "--out", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == data
    assert (out / "eval.jsonl").read_text() == evaluations  # nothing re-evaluated
    assert {m: (out / env / m / "model").stat().st_mtime_ns for m in models} == models  # nor retrained


def test_experiment_s_refuses_other_options_in_the_same_out(
    env: str, micro_pool: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s"
    out.mkdir()
    earlier = SConfig(envs=[env], pool=str(micro_pool), k=4, out=str(out))
    (out / "s_config.json").write_text(earlier.model_dump_json())
    result = CliRunner().invoke(
        app, ["experiment", "s", "--env", env, "--pool", str(micro_pool), "--k", "2", "--out", str(out)]
    )
    assert result.exit_code == 2 and "holds an experiment s run with k=4, not 2" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["s_config.json"]  # refused before any work


def test_a_run_written_before_learning_rate_existed_resumes_only_with_its_default(tmp_path: Path) -> None:
    from reharness.experiments.s import _check_same_experiment

    out = tmp_path / "s"
    out.mkdir()
    earlier = SConfig(envs=[STORED_ENV], out=str(out)).model_dump(mode="json")
    del earlier["learning_rate"]  # the option did not exist when that run was written
    (out / "s_config.json").write_text(json.dumps(earlier))
    _check_same_experiment(out, SConfig(envs=[STORED_ENV], out=str(out)))  # the default: the same experiment
    with pytest.raises(ConfigError, match="learning_rate=0.0002, not 5e-05"):
        _check_same_experiment(out, SConfig(envs=[STORED_ENV], learning_rate=5e-5, out=str(out)))


def test_seeds_pool_into_one_table_with_task_paired_intervals(tmp_path: Path) -> None:
    from reharness.experiments.s_seeds import pooled

    pairs = [[f"t{i}", i] for i in range(40)]
    ones, zeros = [1.0] * 40, [0.0] * 40
    half = [float(i % 2) for i in range(40)]
    a = stored_run(tmp_path / "a", 0, {"start": zeros, "none": half, "router": ones}, pairs, env=STORED_ENV)
    b = stored_run(tmp_path / "b", 1, {"start": zeros, "none": half, "router": half}, pairs, env=STORED_ENV)
    table = pooled([a, b])
    rows = {r["method"]: r for r in table["rows"]}
    assert table["seeds"] == [0, 1] and set(rows) == {"start", "none", "router"}
    assert "vs_router" not in rows["router"] and "vs_router" not in rows["none"]
    router = rows["router"]
    assert router["success"] == 0.75 and router["per_seed"] == [1.0, 0.5] and router["tokens"] == 20
    # per task, the seeds' mean difference: +0.5 on the even tasks (router 1 and 0.5 vs none 0), 0 on the odd
    assert router["vs_none"]["delta"] == 0.25 and router["vs_none"]["verdict"] == "better"
    assert router["vs_none"]["low"] > 0 and "vs_resample" not in router
    assert rows["none"]["vs_start"]["delta"] == 0.5
    c = stored_run(
        tmp_path / "c", 2, {"start": zeros, "none": half, "router": half}, pairs[::-1], env=STORED_ENV
    )
    with pytest.raises(DataError, match="different test tasks"):
        pooled([a, c])
    with pytest.raises(DataError, match="repeat a training seed"):
        pooled([a, a])


def test_seeds_pool_the_rescued_groups_against_fresh_samples_and_placebo(tmp_path: Path) -> None:
    from reharness.experiments.s_seeds import pooled

    pairs = [[f"t{i}", i] for i in range(4)]
    zeros = [0.0] * 4

    # per seed, 2 steps of 20 all-failed groups: resample rescues 1 per step, placebo 2, router 10 (seed 0)
    # and 8 (seed 1); a rescue "succeeds" with any success among its rollouts (3 counts as 1)
    def steps(rescued: int) -> list[list[int]]:
        return [[3] * rescued + [0] * (20 - rescued)] * 2

    runs = [
        stored_run(
            tmp_path / str(seed),
            seed,
            {"start": zeros},
            pairs,
            env=STORED_ENV,
            attempts={
                "resample": steps(1),
                "placebo": steps(2),
                "router": steps(10 - 2 * seed),
                **({"random": steps(5)} if seed == 0 else {}),  # trained on one seed only
            },
        )  # fmt: skip
        for seed in (0, 1)
    ]
    table = pooled(runs)
    rows = {r["method"]: r for r in table["rescues"]}
    assert list(rows) == ["resample", "placebo", "router"]  # an arm without a run on every seed has no row
    router = rows["router"]
    assert (router["groups"], router["rescued"], router["per_seed"]) == (80, 36, [0.5, 0.4])
    assert rows["resample"]["share"] == 4 / 80 and "vs_resample" not in rows["resample"]
    assert router["vs_resample"]["delta"] == pytest.approx(0.45 - 0.05)
    assert router["vs_resample"]["verdict"] == "more" and router["vs_resample"]["low"] > 0
    assert router["vs_placebo"]["delta"] == pytest.approx(0.45 - 0.1) and "vs_placebo" not in rows["placebo"]
    assert rows["placebo"]["vs_resample"]["verdict"] == "tie"  # 8 of 80 against 4 of 80
    text = CliRunner().invoke(app, ["experiment", "s-seeds", *map(str, runs)], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "36/80 (45.0%)" in text.stdout and "+40.0 [" in text.stdout


def test_seeds_split_the_targeted_codes_per_code_against_the_start_and_none(tmp_path: Path) -> None:
    from reharness.experiments.s_seeds import pooled

    pairs = [[f"t{i}", i] for i in range(40)]
    zeros = [0.0] * 40
    targets = ["invalid_action", "premature_answer", "step_limit"]  # step_limit occurs nowhere: no row
    start = [["invalid_action", "premature_answer"] if i % 2 == 0 else ["invalid_action"] for i in range(40)]
    # router: no invalid action on seed 0, on the odd tasks on seed 1; premature answers as the start's
    router = [
        [["premature_answer"] if i % 2 == 0 else [] for i in range(40)],
        [["premature_answer"] if i % 2 == 0 else ["invalid_action"] for i in range(40)],
    ]

    # none (policy-only training): the start's codes, but a premature answer on every task on both seeds
    none = [sorted({*c, "premature_answer"}) for c in start]

    def run(seed: int, target_codes: list[str]) -> Path:
        outcomes = {"start": zeros, "none": zeros, "router": zeros, "rank1": zeros}
        codes: dict[str, list[list[str]]] = {
            "start": start, "none": none, "router": router[seed], "rank1": [[]] * 40,
        }  # fmt: skip
        return stored_run(
            tmp_path / f"{seed}-{len(target_codes)}", seed, outcomes, pairs, env=STORED_ENV, trained=2,
            codes=codes, target_codes=target_codes,
        )  # fmt: skip

    runs = [run(0, targets), run(1, targets)]
    rows = {(r["method"], r["code"]): r for r in pooled(runs)["codes"]}
    # Rank-1 runs in the siblings' harnesses, not H0: no row; a code no episode shows: no row
    assert set(rows) == {
        (m, c) for m in ("start", "none", "router") for c in ("invalid_action", "premature_answer")
    }  # fmt: skip
    start_invalid = rows[("start", "invalid_action")]
    assert start_invalid["rate"] == 1.0 and "vs_start" not in start_invalid and "vs_none" not in start_invalid
    # none against the start (more premature answers on the odd tasks), never against itself
    none_premature = rows[("none", "premature_answer")]
    assert none_premature["vs_start"]["delta"] == 0.5 and none_premature["vs_start"]["verdict"] == "more"
    assert "vs_none" not in none_premature
    invalid = rows[("router", "invalid_action")]
    assert invalid["rate"] == 0.25 and invalid["per_seed"] == [0.0, 0.5]
    # per task the seeds' mean difference: −1 on the even tasks, −0.5 on the odd ones
    assert invalid["vs_start"]["delta"] == -0.75 and invalid["vs_start"]["verdict"] == "fewer"
    premature = rows[("router", "premature_answer")]
    assert premature["rate"] == 0.5 and premature["vs_start"]["delta"] == 0.0
    assert premature["vs_start"]["verdict"] == "tie"
    # against none: the odd tasks' premature answer is gone on both seeds (−1 there, 0 on the even ones)
    assert premature["vs_none"]["delta"] == -0.5 and premature["vs_none"]["verdict"] == "fewer"
    assert rows[("router", "invalid_action")]["vs_none"]["delta"] == -0.75
    # runs whose pools target different codes: no per-code rows (their rates would describe two pools)
    assert pooled([runs[0], run(1, targets[:1])])["codes"] == []
    text = CliRunner().invoke(app, ["experiment", "s-seeds", *map(str, runs)], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "invalid_action" in text.stdout and "-75.0 [" in text.stdout and "fewer" in text.stdout
    assert "vs none" in text.stdout and "-50.0 [" in text.stdout


def test_seeds_pool_rank1_against_the_router_policy_in_h0(tmp_path: Path) -> None:
    from reharness.experiments.s_seeds import pooled

    pairs = [[f"t{i}", i] for i in range(40)]
    zeros, half = [0.0] * 40, [float(i % 2) for i in range(40)]
    runs = [
        stored_run(
            tmp_path / str(seed),
            seed,
            {"start": zeros, "router": zeros, "rank1": half},
            pairs,
            env=STORED_ENV,
            trained=2,
        )  # fmt: skip
        for seed in (0, 1)
    ]
    rank1 = {r["method"]: r for r in pooled(runs)["rows"]}["rank1"]
    assert rank1["success"] == 0.5 and rank1["vs_router"]["delta"] == 0.5
    assert rank1["vs_router"]["verdict"] == "better" and rank1["vs_start"]["delta"] == 0.5
    # an inference-time arm: no training compute and no targeted-code rate of its own
    assert rank1["tokens"] == 0 and rank1["target_code_rate"] is None
