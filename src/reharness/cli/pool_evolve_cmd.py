"""``reharness pool evolve``: build a frozen sibling pool by directional evolution (Harness-S §1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reharness.cli.common import StartHarness, check_specs, friendly_errors, output_dir, stderr, stdout
from reharness.cli.pool_route import Rank1Prior
from reharness.cli.progress import RichEvents, batch_progress
from reharness.cli.scale import Executor, ExecutorKind, RayActors, RayAddress, build_executor, on_executor
from reharness.engineer.factory import ENGINEERS


def _summary(result: Any) -> dict[str, Any]:
    pool = result.pool
    return {
        "pool": str(result.out),
        "env": pool.env,
        "h0": pool.h0_identity,
        "policy": pool.policy.model_dump(),
        "h0_valid_success": result.h0_valid.result.success_rate,
        "siblings": [
            {
                "id": s.id,
                "name": s.name,
                "direction": s.direction,
                "valid_rescued": m.rescued,
                "valid_broken": m.broken,
                "valid_success": m.success,
            }
            for s, m in zip(pool.siblings, result.admitted, strict=True)
        ],
        "coverage": len({t for m in result.admitted for t in m.rescued}),
        "h0_valid_failures": sum(1 for e in result.h0_valid.episodes if not e.success),
    }


@friendly_errors
def evolve_command(
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    agent: Annotated[str, typer.Option(help="Target policy: tiny:NAME, hf:PATH, openai:…, solver, random.")],
    engineer: Annotated[str, typer.Option(help=f"Engineer: {ENGINEERS.describe()}.")] = "operators",
    directions: Annotated[
        str | None, typer.Option(help="Directions: comma-separated names, or a YAML file (default: all).")
    ] = None,
    holdout_direction: Annotated[
        str | None, typer.Option(help="Leave this direction out (to test a pool on unseen repairs).")
    ] = None,
    size: Annotated[int, typer.Option(min=1, help="Most siblings admitted to the pool.")] = 6,
    generations: Annotated[int, typer.Option(min=1, help="Generations of mutation per direction.")] = 2,
    k: Annotated[
        int, typer.Option("--k", min=1, help="Engineer proposals per direction and generation.")
    ] = 4,
    batch_size: Annotated[int, typer.Option(min=1, help="Train tasks every candidate is measured on.")] = 30,
    valid_n: Annotated[int, typer.Option(min=1, help="Valid tasks of the complementary selection.")] = 50,
    max_regressions: Annotated[
        int, typer.Option(min=0, help="Most train tasks an eligible candidate may break.")
    ] = 2,
    lam: Annotated[
        float, typer.Option("--lambda", min=0.0, help="Fitness price of one broken task (λ).")
    ] = 1.0,
    min_new: Annotated[
        int, typer.Option(min=1, help="New valid rescues a sibling must add to be admitted (m).")
    ] = 1,
    finalists: Annotated[
        int,
        typer.Option(
            min=1,
            max=16,
            help="Most finalists per direction and generation (the best candidate, then ones that rescue "
            "a train task no earlier finalist rescues).",
        ),
    ] = 2,
    no_config_mutations: Annotated[
        bool,
        typer.Option(
            "--no-config-mutations",
            help="Propose patches only (no harness-config mutations: they change every prompt, so no prefix "
            "is reused, and some lengthen the context a lot).",
        ),
    ] = False,
    harness: StartHarness = None,
    seed: Annotated[int, typer.Option(help="Seed: chooses the tasks and seeds every episode.")] = 0,
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Pool directory (pool.json, patches, report, runs).")
    ] = Path("pool"),
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes run concurrently.")] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Evolve sibling harnesses along repair directions and freeze a complementary pool (resumable: run
    the same command again after an interruption)."""
    from reharness.pool.evolve import EvolveConfig, evolve

    check_specs([env], agents=[agent], engineers=[engineer])
    config = EvolveConfig.build(
        env=env,
        agent=agent,
        engineer=engineer,
        directions=directions,
        holdout_direction=holdout_direction,
        size=size,
        generations=generations,
        k=k,
        batch_size=batch_size,
        valid_n=valid_n,
        max_regressions=max_regressions,
        lam=lam,
        min_new=min_new,
        finalists=finalists,
        config_mutations=not no_config_mutations,
        seed=seed,
        out=str(out),
        harness=None if harness is None else str(harness),
        concurrency=concurrency,
    )
    episodes_on = build_executor(executor, ray_address, ray_actors)  # Ray: connected, nothing written yet
    progress = batch_progress(transient=as_json)
    with progress:
        work = evolve(config, events=RichEvents(progress), notify=stderr.print)
        result = asyncio.run(on_executor(episodes_on, work))
    summary = _summary(result)
    if as_json:
        print(json.dumps(summary))
        return
    table = Table(title=f"pool {out}: {len(result.pool.siblings)} siblings")
    for col in ("sibling", "direction", "valid success", "rescued", "broken"):
        table.add_column(col)
    table.add_row("H0", "-", f"{result.h0_valid.result.success_rate:.1%}", "-", "-")
    for s in summary["siblings"]:
        table.add_row(
            s["name"],
            s["direction"],
            f"{s['valid_success']:.1%}",
            str(len(s["valid_rescued"])),
            str(len(s["valid_broken"])),
        )
    stdout.print(table)
    stdout.print(
        f"coverage: {summary['coverage']} of {summary['h0_valid_failures']} valid H0 failures rescued by "
        f"some sibling; report: {out / 'report.md'}",
        highlight=False,
    )


def _pool_spec(pool: Any, agent: str, split: str, n: int, seed: int, concurrency: int) -> Any:
    from reharness.runtime.executor import RunSpec

    return RunSpec(env=pool.env, agent=agent, split=split, n=n, seed=seed, concurrency=concurrency)


@friendly_errors
def reanchor_command(
    pool_dir: Annotated[Path, typer.Argument(metavar="POOL", help="Pool directory (made by `pool evolve`).")],
    agent: Annotated[str, typer.Option(help="The policy to re-anchor the profile to.")],
    n: Annotated[int, typer.Option(min=1, help="Valid tasks the profile is measured on.")] = 50,
    seed: Annotated[int, typer.Option(help="Seed: chooses the tasks and seeds every episode.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes run concurrently.")] = 16,
    temperature: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help="Sample the policy at this temperature — the rollout temperature of the training that will "
            "route by the profile (train policy warns when they differ). Default: as the pool's H0 asks.",
        ),
    ] = None,
    samples: Annotated[
        int, typer.Option(min=1, help="With --temperature: passes over the tasks, each with its own seeds.")
    ] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Re-measure a pool's behaviour profile with another (e.g. a further-trained) policy on `valid`
    tasks and write it as POOL/profile.json (the pool itself stays frozen). With --temperature and --samples
    the profile is measured as policy training samples its rescues, and records both."""
    from reharness.core.errors import ConfigError
    from reharness.pool.measure import measure_pool_profile
    from reharness.pool.policy_ref import policy_ref
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import PROFILE_FILE, load_profile, measured_temperature
    from reharness.runtime.agent_specs import make_agent
    from reharness.training.reanchor import reanchor_profile

    pool = load_pool(pool_dir)
    check_specs([pool.env], agents=[agent])
    if temperature is None and samples > 1:
        raise ConfigError(
            "--samples needs --temperature: greedy passes over the same tasks repeat each other",
            hint="add --temperature 1.0 (the rollout temperature of train policy), or drop --samples",
        )
    if temperature is not None and executor != ExecutorKind.local:
        raise ConfigError(
            "--temperature measures the profile in this process", hint="use --executor local with it"
        )
    old = load_profile(pool) if (pool_dir / PROFILE_FILE).is_file() else None
    spec = _pool_spec(pool, agent, "valid", n, seed, concurrency)
    policy = make_agent(agent, notify=stderr.print)
    episodes_on = build_executor(executor, ray_address, ray_actors)  # Ray: connected, nothing written yet
    progress = batch_progress(transient=as_json)

    async def go() -> Any:
        try:
            if temperature is None:
                return await measure_pool_profile(
                    pool, policy, spec, pool_dir / "reanchor" / "runs", RichEvents(progress)
                )
            measured, _ = await reanchor_profile(
                pool, policy, env=pool.env, label=agent, weights=policy_ref(agent, policy).hash, n=n,
                seed=seed, concurrency=concurrency, temperature=temperature, top_p=1.0, samples=samples,
                runs=pool_dir / "reanchor" / "runs", events=RichEvents(progress),
            )  # fmt: skip
            return measured
        finally:
            await policy.close()

    with progress:
        profile = asyncio.run(on_executor(episodes_on, go()))
    if profile.temperature is None:  # greedy as H0 asks: recorded, so training can compare it with its own
        profile.temperature = measured_temperature(profile, pool)
    path = profile.save(pool)
    summary = {
        "profile": str(path),
        "policy": profile.policy.model_dump(),
        "policy_hash": profile.policy_hash,
        "previous_policy_hash": old.policy_hash if old else None,
        "tasks": len(profile.tasks),
        "temperature": profile.temperature,
        "samples": profile.samples,
    }
    if as_json:
        print(json.dumps(summary))
    else:
        stdout.print(
            f"profile re-anchored to {agent} (policy hash {profile.policy_hash}, was "
            f"{summary['previous_policy_hash']}) on {len(profile.tasks)} valid tasks: {path}",
            highlight=False,
        )


@friendly_errors
def eval_command(
    pool_dir: Annotated[Path, typer.Argument(metavar="POOL", help="Pool directory (made by `pool evolve`).")],
    agent: Annotated[str, typer.Option(help="The policy to evaluate (usually the pool's own).")],
    split: Annotated[str, typer.Option(help="Held-out split.")] = "test",
    n: Annotated[int, typer.Option(min=1, help="Tasks.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed: chooses the tasks and seeds every episode.")] = 0,
    route: Annotated[
        str, typer.Option(help="Rank-1 routing strategy: validation, profile or vote (rule judges).")
    ] = "validation",
    rank1_prior: Rank1Prior = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes run concurrently.")] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """H0, every sibling, Rank-1 routing and the oracle on the same held-out tasks and seeds."""
    from reharness.pool.evaluate import evaluate_pool
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import load_profile
    from reharness.pool.router import RANK1_PRIOR
    from reharness.runtime.agent_specs import make_agent

    if route not in ("validation", "profile", "vote"):
        from reharness.core.errors import ConfigError

        raise ConfigError(
            f"--route {route!r} is not a Rank-1 strategy", hint="use --route validation, profile or vote"
        )
    pool = load_pool(pool_dir)
    check_specs([pool.env], agents=[agent])
    profile = load_profile(pool) if pool.siblings else None  # an empty pool: H0 is the whole table
    spec = _pool_spec(pool, agent, split, n, seed, concurrency)
    policy = make_agent(agent, notify=stderr.print)
    episodes_on = build_executor(executor, ray_address, ray_actors)  # Ray: connected, nothing written yet
    progress = batch_progress(transient=as_json)

    async def go() -> Any:
        try:
            return await evaluate_pool(
                pool,
                profile,
                policy,
                spec,
                pool_dir / "eval" / "runs",
                route=route,
                rank1_prior=RANK1_PRIOR if rank1_prior is None else rank1_prior,
                events=RichEvents(progress),
            )
        finally:
            await policy.close()

    with progress:
        result = asyncio.run(on_executor(episodes_on, go()))
    (pool_dir / "eval").mkdir(exist_ok=True)
    prior = "" if rank1_prior is None else f"-prior{rank1_prior:g}"
    name = f"{split}-n{n}-seed{seed}-{route}{prior}.json"
    (pool_dir / "eval" / name).write_text(
        json.dumps(result.model_dump(mode="json"), indent=2) + "\n", "utf-8"
    )
    if as_json:
        print(json.dumps(result.model_dump(mode="json")))
        return
    table = Table(title=f"{pool.env} / {agent}: {result.n} {split} tasks, seed {seed}, same tasks and seeds")
    for col in ("harness", "direction", "success", "Δ vs H0 [95% CI]", "rescued", "broken"):
        table.add_column(col)
    for row in [*result.rows, result.rank1]:
        table.add_row(
            row.harness,
            row.direction,
            f"{row.success:.1%}",
            f"{row.delta:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}]",
            str(row.rescued),
            str(row.broken),
        )
    stdout.print(table)
    o, best = result.oracle, result.best_single
    if best is not None:
        stdout.print(f"best single sibling: {best.harness} ({best.success:.1%})", highlight=False)
    stdout.print(f"rank1: routing {result.rank1.routing}, {result.rank1.rollouts} rollouts", highlight=False)
    stdout.print(
        f"oracle: {o.covered}/{o.h0_failures} H0 failures covered ({o.coverage:.1%}), success "
        f"{o.success:.1%}, {o.rollouts} rollouts",
        highlight=False,
    )
