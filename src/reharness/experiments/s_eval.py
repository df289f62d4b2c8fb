"""Held-out evaluation of ``reharness experiment s`` (see :mod:`.s`) and the aggregation into its rows.

Every policy — the starting one (``start``) and each trained method — runs the same ``test_n`` ``test``
tasks with the same seeds under H0 (the pool's base harness — the one every method trained in —, greedy;
the tasks chosen by ``test_seed``, default the training seed) through the ordinary batch executor
(:func:`~reharness.runtime.executor.run_batch`, runs stored under ``OUT/ENV/runs``). The ``router`` policy
also runs with Rank-1 routing on the pool's profile (:class:`~reharness.pool.routed_run.Rank1Route`, the
route of ``reharness run --pool POOL --route rank1``). One record per (env, method) is appended to
``OUT/eval.jsonl``: the per-task successes in episode order, the (task identity, seed) pairs, and the
behaviour rates of the episodes; a record is reused on rerun while the policy's weights hash is unchanged.

Intervals: ``ci_low``/``ci_high`` of a row are a 95 % percentile bootstrap interval of the success rate
over the test tasks (resampling tasks; not paired). The paired bootstrap interval of the difference from
``start`` (same tasks and seeds) is kept beside it (``delta_vs_start``), and Rank-1's from the ``router``
policy in H0.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.core.jsonl import read_jsonl
from reharness.experiments.s_config import EQUAL, START, TRAINED, Rank1Row, SConfig, SResult, SRow

if TYPE_CHECKING:
    from reharness.store.records import EpisodeRecord

EVAL_FILE = "eval.jsonl"
RANK1 = "rank1"
#: behaviour rates reported before/after training: per decision (step flags) and per episode (codes)
STEP_FLAGS = ("invalid_action", "repeated_action", "format_error")
EPISODE_CODES = ("invalid_action", "repeated_action", "format_error", "premature_answer")


def behaviour(episodes: list[EpisodeRecord]) -> dict[str, float]:
    """Behaviour rates of a batch: ``FLAG/step`` — share of decisions whose step carries the flag — and
    ``CODE/episode`` — share of episodes whose failure codes include the code; plus the mean steps."""
    steps = [s for e in episodes for s in e.steps]
    rates: dict[str, float] = {}
    for flag in STEP_FLAGS:
        rates[f"{flag}/step"] = round(sum(flag in s.flags for s in steps) / max(1, len(steps)), 6)
    for code in EPISODE_CODES:
        rates[f"{code}/episode"] = round(
            sum(code in e.failure_codes for e in episodes) / max(1, len(episodes)), 6
        )
    rates["steps/episode"] = round(len(steps) / max(1, len(episodes)), 4)
    return rates


def load_records(path: Path) -> dict[str, dict[str, Any]]:
    """The finished records of ``eval.jsonl`` by key (a torn last line is dropped)."""
    return {r["key"]: r for r in read_jsonl(path)}


def _model_dir(config: SConfig, env: str, method: str, training: dict[str, dict[str, Any]]) -> Path:
    if method == START:
        from reharness.training.policy_train import policy_model_dir

        return policy_model_dir(config.agent_for(env))
    return Path(training[method]["path"])


async def _run(
    config: SConfig,
    env: str,
    model_dir: Path,
    label: str,
    pool_dir: Path,
    rank1_profile: Path | None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> tuple[list[EpisodeRecord], dict[str, int]]:
    """The test episodes of the policy in ``model_dir`` in the pool's H0 (Rank-1 routed on the profile in
    ``rank1_profile`` when it is given)."""
    from reharness.failures import failure_codes
    from reharness.runtime.agent_specs import make_agent
    from reharness.runtime.executor import RunSpec, run_batch
    from reharness.runtime.harness import Harness

    spec = RunSpec(
        env=env,
        agent=label,
        split="test",
        n=config.test_n,
        seed=config.eval_seed,
        concurrency=config.concurrency,
    )
    agent = make_agent(f"hf:{model_dir}", max_batch_size=config.concurrency)
    runs = Path(config.out) / env / "runs"
    from reharness.pool.pool import load_pool

    pool = load_pool(pool_dir)  # H0 is the pool's: the harness every method trained in
    try:
        if rank1_profile is None:
            result = await run_batch(
                spec, agent, Harness(pool.h0), runs, annotate=failure_codes, on_episode=on_episode
            )
            return result.episodes, {}
        from reharness.pool.profile import load_profile
        from reharness.pool.routed_run import Rank1Route

        profile = load_profile(pool, rank1_profile)
        route = Rank1Route(pool, profile, max_workers=min(8, config.concurrency))
        result = await run_batch(
            spec, agent, Harness(pool.h0), runs, annotate=failure_codes, route=route, on_episode=on_episode
        )
        return result.episodes, route.routing(result.episodes)
    finally:
        await agent.close()


def _reusable(old: dict[str, Any], weights: str, config: SConfig, profile: Path | None) -> bool:
    """Whether a stored record answers this evaluation (same weights, tasks and Rank-1 profile, and
    written with the per-episode failure codes)."""
    same_profile = old.get("rank1_profile") == (str(profile) if profile else None)
    same_tasks = old["n"] == config.test_n and old.get("test_seed", config.seed) == config.eval_seed
    return old["weights"] == weights and same_tasks and "codes" in old and same_profile


def rank1_profile(config: SConfig, env: str) -> Path:
    """The profile Rank-1 routes the router policy by: the one re-anchored on the trained policy
    (``OUT/ENV/router/profiles/final.json``) when the run re-anchored, else the pool's own."""
    from reharness.pool.profile import PROFILE_FILE
    from reharness.training.policy_train import FINAL_PROFILE

    final = Path(config.out) / env / "router" / "profiles" / FINAL_PROFILE
    return final if final.is_file() else config.pool_for(env) / PROFILE_FILE


def evaluate_env(
    config: SConfig,
    env: str,
    training: dict[str, dict[str, Any]],
    has_siblings: bool,
    notify: Callable[[str], None],
    progress: Callable[[str, int, int, dict[str, float]], None] | None = None,
) -> list[dict[str, Any]]:
    """The evaluation records of ``env``: ``start``, every trained method and Rank-1 (loaded or run);
    ``progress`` (stage, episodes done, total, {}) is told as each test episode finishes (the CLI's bars)."""
    from reharness.pool.policy_ref import weights_hash

    path = Path(config.out) / EVAL_FILE
    done = load_records(path)
    methods = [START, *[m for m in (*TRAINED, EQUAL) if m in training]]
    if "router" in training:
        methods.append(RANK1)
    records = []
    for method in methods:
        policy = "router" if method == RANK1 else method
        model_dir = _model_dir(config, env, policy, training)
        weights = weights_hash(model_dir) or str(model_dir)
        key = f"{env}/{method}"
        old = done.get(key)
        routed = method == RANK1 and has_siblings
        profile = rank1_profile(config, env) if routed else None
        if old is not None and _reusable(old, weights, config, profile):
            records.append(old)
            continue
        notify(
            f"{env}/{method}: evaluating on {config.test_n} test tasks"
            + (" (Rank-1)" if routed else " in H0")
        )
        alias = training.get(policy, {}).get("alias") if policy != START else None
        label = f"s-{alias or policy}@{weights}"  # an alias reuses its original's stored run
        finished = [0]

        def on_episode(_: EpisodeRecord, stage: str = f"eval {key}", count: list[int] = finished) -> None:
            count[0] += 1
            if progress is not None:
                progress(stage, count[0], config.test_n, {})

        episodes, routing = asyncio.run(
            _run(config, env, model_dir, label, config.pool_for(env), profile, on_episode)
        )
        record = {
            "key": key,
            "env": env,
            "method": method,
            "weights": weights,
            "n": len(episodes),
            "pairs": [[e.task_identity, e.seed] for e in episodes],
            "successes": [float(e.success) for e in episodes],
            "test_seed": config.eval_seed,
            "codes": [sorted(e.failure_codes) for e in episodes],
            "harness_ids": sorted({e.harness_id for e in episodes}),
            "rank1_profile": str(profile) if profile else None,
            "behaviour": behaviour(episodes),
            "routing": routing,
            "run_id": episodes[0].run_id if episodes else None,
        }
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
        records.append(record)
    return records


def _paired(
    base: dict[str, Any], other: dict[str, Any], seed: int, key: str = "successes"
) -> tuple[float, float, float]:
    """Mean paired difference of ``key`` (other − base) and its bootstrap interval; same tasks and seeds."""
    from reharness.measure.paired import bootstrap_ci, check_pairing

    check_pairing([tuple(p) for p in base["pairs"]], [tuple(p) for p in other["pairs"]], "evaluation")
    diffs = [o - b for b, o in zip(base[key], other[key], strict=True)]
    low, high = bootstrap_ci(diffs, seed=seed)
    return round(sum(diffs) / max(1, len(diffs)), 6), low, high


def target_codes(pool_dir: Path) -> list[str]:
    """The failure codes the pool's siblings' directions target (every direction's, for an empty pool)."""
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import pool_directions

    pool = load_pool(pool_dir)
    used = {s.direction for s in pool.siblings}
    directions = [d for d in pool_directions(pool) if d.name in used or not used]
    return sorted({code for d in directions for code in d.codes})


def with_targets(record: dict[str, Any], targets: set[str]) -> dict[str, Any]:
    """``record`` plus ``targeted``: per episode, 1.0 when its failure codes hold a targeted code."""
    return record | {"targeted": [float(bool(targets & set(codes))) for codes in record["codes"]]}


def aggregate(
    config: SConfig,
    records: list[dict[str, Any]],
    training: dict[str, dict[str, dict[str, Any]]],
    siblings: dict[str, bool],
) -> SResult:
    """Rows per (method, env) — ``start`` first, then the methods in training order — Rank-1 per env and the
    per-method average over environments."""
    from reharness.measure.paired import bootstrap_ci

    codes = {env: target_codes(config.pool_for(env)) for env in config.envs}
    by = {(r["env"], r["method"]): with_targets(r, set(codes[r["env"]])) for r in records}
    rows: list[SRow] = []
    rank1: list[Rank1Row] = []
    behaviour_of: dict[str, dict[str, dict[str, float]]] = {}
    for env in config.envs:
        start = by[(env, START)]
        for method in [START, *[m for m in (*TRAINED, EQUAL) if (env, m) in by]]:
            record = by[(env, method)]
            values = record["successes"]
            low, high = bootstrap_ci(values, seed=config.seed)
            delta, dlow, dhigh = _paired(start, record, config.seed)
            tdelta, tlow, thigh = _paired(start, record, config.seed, "targeted")
            summary = training[env].get(method, {})
            vs = {
                other: list(_paired(by[(env, other)], record, config.seed))
                for other in ("none", "resample")
                if (env, other) in by and other != method
            }
            rows.append(
                SRow(
                    method=method,
                    env=env,
                    success=round(sum(values) / max(1, len(values)), 6),
                    ci_low=low,
                    ci_high=high,
                    rollouts=int(summary.get("rollouts", 0)),
                    delta_vs_start=delta,
                    delta_low=dlow,
                    delta_high=dhigh,
                    n=len(values),
                    alias=summary.get("alias"),
                    target_code_rate=round(sum(record["targeted"]) / max(1, len(values)), 6),
                    target_delta=tdelta,
                    target_delta_low=tlow,
                    target_delta_high=thigh,
                    tokens=int(summary.get("tokens", 0)),
                    model_calls=int(summary.get("model_calls", 0)),
                    vs=vs,
                )
            )
            per_code = {
                f"{code}/episode": round(sum(code in c for c in record["codes"]) / max(1, len(values)), 6)
                for code in codes[env]
            }
            behaviour_of.setdefault(env, {})[method] = record["behaviour"] | per_code
        if (env, RANK1) in by:
            record = by[(env, RANK1)]
            values = record["successes"]
            low, high = bootstrap_ci(values, seed=config.seed)
            delta, dlow, dhigh = _paired(by[(env, "router")], record, config.seed)
            rank1.append(
                Rank1Row(
                    env=env,
                    success=round(sum(values) / max(1, len(values)), 6),
                    ci_low=low,
                    ci_high=high,
                    delta_vs_h0=delta,
                    delta_low=dlow,
                    delta_high=dhigh,
                    routing=record["routing"] or {"H0": len(values)},
                )
            )
    methods = list(dict.fromkeys(r.method for r in rows))
    average = {
        m: round(sum(r.success for r in rows if r.method == m) / len(config.envs), 6)
        for m in methods
        if all(any(r.method == m and r.env == env for r in rows) for env in config.envs)
    }
    return SResult(
        config=config,
        rows=rows,
        rank1=rank1,
        average=average,
        siblings=siblings,
        training=training,
        behaviour=behaviour_of,
        target_codes=codes,
    )
