"""``reharness experiment s``: Harness-S's claim at small scale — rescue training against its baselines.

Per environment, from the same starting policy (default the shipped tiny S agent), the same seed and the same
task stream:

1. **Pool** — ``--pool DIR`` (``{env}`` in it is replaced per environment), else one is evolved into
   ``OUT/ENV/pool`` with the recipe the shipped pools were measured with (``pool evolve --generations 1 --k 3
   --batch-size 20 --valid-n 40 --no-config-mutations``; resumable). A pool without siblings is accepted:
   nothing can rescue a group then, so ``router``, ``vote`` and ``random`` *are* policy-only GRPO — they are
   not trained again but reported with ``none``'s policy and numbers (the report says so), and Rank-1 routes
   every task to H0.
2. **Train** (:mod:`reharness.training.policy_train`, ``OUT/ENV/METHOD``) one policy per method: ``none``
   (policy-only GRPO in H0), ``resample`` (an all-failed group gets K fresh H0 rollouts: equal compute),
   ``random`` (a random sibling), ``placebo`` (a random placebo sibling: H0 plus a neutral sentence, so a gain
   there comes from swapping out failed groups, not from harness content), ``vote`` (the seed's router:
   the profile's top-k, then the judges vote) and ``router`` (Harness-S, strategy ``route``). The routed
   methods measure the pool's profile with the start policy at the rollout temperature before step 1,
   re-anchor every ``reanchor_every`` steps and once more on the trained policy (its Rank-1 reads that
   profile); ``reanchor_every=0`` switches all of it off. With ``equal_rollouts``, ``none`` is also
   trained on until its rollouts reach ``router``'s (``none-equal-rollouts``: a copy of ``none``'s run
   resumed from its last checkpoint, so the first steps are shared, not recomputed).
3. **Evaluate in H0** (:mod:`.s_eval`): every trained policy and the starting policy (``start``) on the same
   ``test_n`` held-out ``test`` tasks and seeds, greedy, through the ordinary batch executor; plus the
   ``router`` policy with Rank-1 routing on the pool's profile — exactly the episodes of ``reharness run
   --agent hf:OUT/ENV/router/model --pool POOL --route rank1`` with the same ``--n``/``--seed``.
4. **Report** (:mod:`.s_report`): ``OUT/report.md`` with the tables and plots, ``OUT/result.json``.

Everything is resumable: a finished training (``summary.json`` with the requested steps) and a finished
evaluation (``OUT/eval.jsonl``, keyed by environment and method, tied to the policy's weights hash) are
reused on rerun; an interrupted training resumes from its checkpoint, an interrupted evaluation from its run.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError
from reharness.core.resume import refuse_other_options
from reharness.experiments.s_config import (
    DEFAULT_EVOLVE,
    EQUAL,
    ROUTED,
    START,
    TRAINED,
    Rank1Row,
    SConfig,
    SResult,
    SRow,
    parse_methods,
)
from reharness.experiments.s_data import learnable, metrics, oracle_agreement, pool_costs
from reharness.experiments.s_eval import aggregate, evaluate_env
from reharness.experiments.s_report import write_report
from reharness.training.policy_config import check_trainable

__all__ = [
    "EQUAL",
    "START",
    "TRAINED",
    "Rank1Row",
    "SConfig",
    "SResult",
    "SRow",
    "check_inputs",
    "parse_methods",
    "run_s",
]


def check_pool(path: Path, env: str, *, template: bool = False) -> bool:
    """Load the pool at ``path`` (hashes checked) and its profile when it has siblings; refuse a pool of
    another environment. Returns whether it has siblings. Nothing is written."""
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import load_profile

    pool = load_pool(path)
    if pool.env != env:
        raise ConfigError(
            f"--pool {str(path)!r} was evolved for env {pool.env!r}, not {env!r}",
            hint=(
                "with --env all pass a template such as --pool 'pools/pool-{env}'"
                if template
                else f"pass a pool evolved with `reharness pool evolve --env {env}`"
            ),
        )
    if pool.siblings:
        load_profile(pool)
    return bool(pool.siblings)


def check_inputs(config: SConfig) -> None:
    """Everything that can be checked before any file is written: agents and pools."""
    if len(config.envs) > 1 and config.pool is not None and "{env}" not in config.pool:
        raise ConfigError(
            f"--pool {config.pool!r} names one pool for {len(config.envs)} environments",
            hint="put {env} in it, e.g. --pool 'docs/results/pool-{env}'",
        )
    for env in config.envs:
        agent = config.agent_for(env)
        check_trainable(agent)
        if config.pool is not None:
            check_pool(config.pool_for(env), env, template=len(config.envs) > 1)
        if config.unseen_tasks:  # which tasks are unseen is known before any pool is evolved or trained
            from reharness.training.policy_train import policy_model_dir
            from reharness.training.unseen_tasks import check_unseen_tasks

            check_unseen_tasks(policy_model_dir(agent), env)


def _check_same_experiment(out: Path, config: SConfig) -> None:
    """Refuse to mix an earlier experiment's trainings with other options (``test_n``, ``methods``,
    ``equal_rollouts`` and ``concurrency`` may change: they add or re-run evaluations only)."""
    free = {"test_n", "test_seed", "methods", "equal_rollouts", "concurrency", "out", "envs"}
    refuse_other_options(out / "s_config.json", config, run="an experiment s run", free=free)


# ----------------------------------------------------------------------------------------------- pools
def ensure_pool(config: SConfig, env: str, notify: Callable[[str], None]) -> bool:
    """The pool of ``env`` (evolved into ``OUT/ENV/pool`` when ``--pool`` was not given); whether it has
    siblings."""
    path = config.pool_for(env)
    if config.pool is None and not (path / "pool.json").is_file():
        import asyncio

        from reharness.pool.evolve import EvolveConfig, evolve

        notify(f"{env}: evolving a pool into {path} (pool evolve, the shipped pools' recipe)")
        evolve_config = EvolveConfig(
            env=env, agent=config.agent_for(env), out=str(path), seed=config.seed, **DEFAULT_EVOLVE
        )
        asyncio.run(evolve(evolve_config, notify=notify))
    return check_pool(path, env)


# -------------------------------------------------------------------------------------------- training
def _summary_of(out: Path, steps: int) -> dict[str, Any] | None:
    file = out / "summary.json"
    if not file.is_file() or not (out / "model").is_dir():
        return None
    summary: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return summary if int(summary.get("steps", 0)) >= steps else None


def train_method(
    config: SConfig, env: str, method: str, steps: int, progress: Any, notify: Callable[[str], None]
) -> dict[str, Any]:
    """Train (or load) one method's policy into ``OUT/ENV/METHOD``; returns ``train_policy``'s summary."""
    from reharness.training.policy_config import PolicyTrainConfig
    from reharness.training.policy_train import train_policy

    out = Path(config.out) / env / method
    done = _summary_of(out, steps)
    if done is not None:
        notify(f"{env}/{method}: trained policy found in {out}")
        return done
    rescue = {EQUAL: "none", "vote": "router"}.get(method, method)
    routed = method in ROUTED
    train_config = PolicyTrainConfig(
        env=env,
        agent=config.agent_for(env),
        pool=str(config.pool_for(env)) if rescue in ("router", "random", "placebo") else None,
        rescue=rescue,  # type: ignore[arg-type]
        route="vote" if method == "vote" else config.route,
        vote_k=config.vote_k,
        judge_model=config.judge_model,
        # --reanchor-every 0 switches re-anchoring off entirely (at start, during and after training)
        reanchor_at_start=routed and config.reanchor_every > 0,
        profile_samples=config.profile_samples,
        rewritten_turns=config.rewritten_turns,
        k=config.k,
        steps=steps,
        tasks_per_step=config.tasks_per_step,
        temperature=config.temperature,
        learning_rate=config.learning_rate,
        lora_rank=config.lora_rank,
        unseen_tasks=config.unseen_tasks,
        reanchor_every=config.reanchor_every if routed else 0,
        reanchor_n=config.reanchor_n,
        micro_batches=config.micro_batches,
        concurrency=config.concurrency,
        seed=config.seed,
        out=str(out),
    )
    notify(f"{env}/{method}: GRPO, {steps} steps, k={config.k}, rescue={rescue}")
    return train_policy(train_config, progress=progress)


def _fork_none(config: SConfig, env: str) -> None:
    """Start ``none-equal-rollouts`` as a copy of ``none``'s run (resumed from its last checkpoint: the same
    task stream and rollouts, the first ``steps`` steps not recomputed)."""
    source, target = Path(config.out) / env / "none", Path(config.out) / env / EQUAL
    if target.exists() or not (source / "checkpoints").is_dir():
        return
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("model", "summary.json"))
    file = target / "train_config.json"
    saved = json.loads(file.read_text(encoding="utf-8"))
    file.write_text(json.dumps(saved | {"out": str(target)}, indent=2, sort_keys=True) + "\n", "utf-8")


def train_env(
    config: SConfig, env: str, has_siblings: bool, progress: Any, notify: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """Every method's training summary for ``env`` (``router``/``random`` alias ``none`` on an empty pool)."""
    summaries: dict[str, dict[str, Any]] = {}
    needs_none = "none" in config.methods or not has_siblings or config.equal_rollouts
    for method in [m for m in TRAINED if m in config.methods or (m == "none" and needs_none)]:
        if method in ("router", "random", "vote") and not has_siblings:
            summaries[method] = summaries["none"] | {"alias": "none"}
            continue
        summaries[method] = train_method(config, env, method, config.steps, progress, notify)
    if config.equal_rollouts and "router" in summaries:
        per_step = config.tasks_per_step * config.k
        steps = max(config.steps, math.ceil(int(summaries["router"]["rollouts"]) / per_step))
        if steps == config.steps:
            summaries[EQUAL] = summaries["none"] | {"alias": "none"}
        else:
            _fork_none(config, env)
            summaries[EQUAL] = train_method(config, env, EQUAL, steps, progress, notify)
    return summaries


def run_s(
    config: SConfig, *, notify: Callable[[str], None] = lambda text: None, progress: Any = None
) -> SResult:
    """Pools, trainings, evaluations and the report of an experiment (see the module docstring)."""
    check_inputs(config)
    out = Path(config.out)
    _check_same_experiment(out, config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "s_config.json").write_text(json.dumps(config.model_dump(mode="json"), indent=2) + "\n", "utf-8")
    training: dict[str, dict[str, dict[str, Any]]] = {}
    records: list[dict[str, Any]] = []
    siblings: dict[str, bool] = {}
    for env in config.envs:
        siblings[env] = ensure_pool(config, env, notify)
        training[env] = train_env(config, env, siblings[env], progress, notify)
        records += evaluate_env(config, env, training[env], siblings[env], notify, progress)
    result = aggregate(config, records, training, siblings)
    for env in config.envs:
        result.pool_costs[env] = pool_costs(config.pool_for(env))
        trained = [m for m in training[env] if not training[env][m].get("alias")]
        choosing: list[str] = [m for m in ("random", "vote", "router") if m in trained]
        if choosing and siblings[env]:
            n = len(json.loads((config.pool_for(env) / "pool.json").read_text(encoding="utf-8"))["siblings"])
            result.oracle[env] = oracle_agreement(out, env, choosing, n)
        result.learnable[env] = {m: learnable(metrics(out, env, m)) for m in trained if m != "none"}
    (out / "result.json").write_text(json.dumps(result.model_dump(mode="json"), indent=2) + "\n", "utf-8")
    write_report(result, out)
    return result
