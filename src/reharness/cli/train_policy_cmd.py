"""``reharness train policy``: GRPO of an agent policy in H0 with Harness-S sibling rescue.

The trained policy is a Hugging Face model directory (``OUT/model``, usable as ``--agent hf:OUT/model``);
with ``--json`` stdout holds ``{path, steps, rollouts, rescues: {tried, succeeded}, train_seconds}``. All
options are checked (the pool is loaded and its hashes verified) before anything is written; a rerun of the
same command resumes from the last checkpoint.
"""

from __future__ import annotations

import enum
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reharness.cli.common import build_options, check_specs, friendly_errors, output_dir, stdout
from reharness.cli.scale import (
    Executor,
    ExecutorKind,
    RayActors,
    RayAddress,
    check_executor_options,
    executor_scope,
)
from reharness.cli.train_launch import DryRun, launch_plan, show_plan
from reharness.core.errors import ConfigError


class RescueMode(enum.StrEnum):
    router = "router"
    random = "random"
    placebo = "placebo"
    resample = "resample"
    none = "none"


class RouteName(enum.StrEnum):
    """The router strategies a rescue can route by (one vocabulary: :mod:`reharness.pool.strategies`)."""

    validation = "validation"
    profile = "profile"
    vote = "vote"
    random = "random"


Route = Annotated[
    RouteName,
    typer.Option(
        help="Router strategy: validation (evolve-time rescue rate), profile (measured + learned evidence), "
        "vote (the profile's top --vote-k, then the judges vote), random (a seeded shuffle)."
    ),
]
VoteK = Annotated[int, typer.Option(min=1, help="vote: the profile's top-k the judges vote among.")]
Judges = Annotated[
    str, typer.Option("--judges", help="vote: rule judges, comma-separated (direction, behaviour).")
]
JudgeModel = Annotated[
    str | None, typer.Option(help="vote: add an LLM judge on this model spec (e.g. openai:MODEL@URL).")
]
#: ``--unseen-tasks`` of ``train policy`` and ``experiment s``.
UnseenTasks = Annotated[
    bool,
    typer.Option(
        "--unseen-tasks",
        help="Train only on train tasks the start policy was not shown as demonstrations (a tiny agent "
        "trained with fewer demos than tasks: `agent train --demos N`).",
    ),
]
ReanchorAtStart = Annotated[
    bool,
    typer.Option(
        "--reanchor-at-start/--no-reanchor-at-start",
        help="Measure the profile with the start policy at the rollout temperature before step 1.",
    ),
]
ProfileSamples = Annotated[
    int, typer.Option(min=1, max=64, help="Re-anchoring: sampled episodes per valid task and harness.")
]


def judge_list(text: str) -> list[str]:
    """``--judges direction,behaviour`` → the rule judges' names (each checked)."""
    from reharness.pool.judges import RULE_JUDGES

    names = [j.strip() for j in text.split(",") if j.strip()]
    for name in names:
        if name not in RULE_JUDGES:
            raise ConfigError(
                f"unknown --judges entry {name!r}",
                hint=f"rule judges: {', '.join(RULE_JUDGES)}; an LLM judge: --judge-model SPEC",
            )
    return names


class RewrittenTurns(enum.StrEnum):
    mask = "mask"
    executed = "executed"
    raw = "raw"


class RescueGroup(enum.StrEnum):
    replace = "replace"  # type: ignore[assignment]
    mixed = "mixed"


def check_pool_for(pool: Path | None, env: str, rescue: str = "router") -> None:
    """Load ``pool`` (every hash checked) and, for the router, its profile; refuse a pool of another
    environment, or an empty one when siblings must rescue."""
    if pool is None:
        return
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import load_profile

    loaded = load_pool(pool)
    if loaded.env != env:
        raise ConfigError(
            f"--pool {str(pool)!r} was evolved for env {loaded.env!r}, not {env!r}",
            hint=f"pass a pool evolved with `reharness pool evolve --env {env}`",
        )
    if rescue in ("router", "random") and not loaded.siblings:  # placebo builds its own siblings
        raise ConfigError(
            f"--pool {str(pool)!r} has no siblings: nothing can rescue a group",
            hint="evolve a larger pool, or train with --rescue resample|none",
        )
    if rescue == "router":
        load_profile(loaded)


def policy_command(
    ctx: typer.Context,
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    agent: Annotated[
        str, typer.Option(help="Starting policy: tiny:NAME, hf:DIR, hf:FILE.gguf or pretrained:NAME.")
    ] = "tiny:{env}-S",
    pool: Annotated[
        Path | None,
        typer.Option(help="Frozen sibling pool directory (needed by router, random and placebo)."),
    ] = None,
    rescue: Annotated[
        RescueMode,
        typer.Option(help="What an all-failed H0 group gets: router, random, placebo, resample, none."),
    ] = RescueMode.router,
    route: Route = RouteName.validation,
    vote_k: VoteK = 3,
    judges: Judges = "direction,behaviour",
    judge_model: JudgeModel = None,
    k: Annotated[int, typer.Option("--k", min=2, max=64, help="Rollouts per task (GRPO group).")] = 8,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 20,
    tasks_per_step: Annotated[int, typer.Option(min=1, help="Train tasks per optimizer step.")] = 4,
    temperature: Annotated[float, typer.Option(min=0.01, help="Rollout sampling temperature.")] = 1.0,
    max_new_tokens: Annotated[
        int | None,
        typer.Option(min=1, help="Reply budget of rollouts (default: the model's max_new_tokens)."),
    ] = None,
    rewritten_turns: Annotated[
        RewrittenTurns, typer.Option(help="Turns a hook rewrote or forced: mask, executed or raw.")
    ] = RewrittenTurns.mask,
    rescue_group: Annotated[
        RescueGroup, typer.Option(help="replace (the sibling group) or mixed (its successes + H0 failures).")
    ] = RescueGroup.replace,
    reanchor_every: Annotated[
        int, typer.Option(min=0, help="Re-anchor the pool's profile every R steps (0: never).")
    ] = 0,
    reanchor_at_start: ReanchorAtStart = False,
    profile_samples: ProfileSamples = 1,
    learning_rate: Annotated[float, typer.Option(min=0.0, help="Learning rate.")] = 2e-4,
    micro_batches: Annotated[int, typer.Option(min=1, help="Gradient-accumulation chunks per step.")] = 4,
    lora_rank: Annotated[
        int,
        typer.Option(
            min=0, help="Train LoRA adapters of this rank instead of all weights (0: all; needs peft)."
        ),
    ] = 0,
    no_audit: Annotated[
        bool, typer.Option("--no-audit", help="Reward sibling successes without replaying them in H0.")
    ] = False,
    unseen_tasks: UnseenTasks = False,
    save_steps: Annotated[int, typer.Option(min=1, help="Checkpoint every N steps.")] = 5,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes decoded together.")] = 64,
    seed: Annotated[int, typer.Option(help="Seed (task stream, rollouts, router).")] = 0,
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Output directory (model/, checkpoints/, metrics).")
    ] = Path("policy"),
    tensorboard: Annotated[bool, typer.Option("--tensorboard", help="Log curves to TensorBoard.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary on stdout.")] = False,
    dry_run: DryRun = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Train a policy with GRPO in the base harness H0; an all-failed group is re-sampled by the same
    policy under a sibling harness (Harness-S rescue) or by the baselines (random sibling, H0 resampling,
    none). Deploy the result in H0: --agent hf:OUT/model."""
    from reharness.envs.registry import resolve_env_name
    from reharness.training.policy_config import PolicyTrainConfig, check_trainable

    check_executor_options(executor, ray_address, ray_actors)  # a dry run too
    env_name = resolve_env_name(env).name
    agent = agent.replace("{env}", env_name)
    check_specs([env_name], agents=[agent])
    check_trainable(agent)
    if tensorboard and not any(find_spec(name) for name in ("tensorboard", "tensorboardX")):
        raise ConfigError("--tensorboard needs the tensorboard package", hint="pip install tensorboard")
    config = build_options(
        PolicyTrainConfig,
        "reharness train policy",
        env=env_name,
        agent=agent,
        pool=str(pool) if pool is not None else None,
        rescue=rescue.value,
        route=route.value,
        vote_k=vote_k,
        judges=judge_list(judges),
        judge_model=judge_model,
        reanchor_at_start=reanchor_at_start,
        profile_samples=profile_samples,
        k=k,
        steps=steps,
        tasks_per_step=tasks_per_step,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        rewritten_turns=rewritten_turns.value,
        rescue_group=rescue_group.value,
        reanchor_every=reanchor_every,
        learning_rate=learning_rate,
        micro_batches=micro_batches,
        lora_rank=lora_rank,
        audit=not no_audit,
        unseen_tasks=unseen_tasks,
        save_steps=save_steps,
        concurrency=concurrency,
        seed=seed,
        out=str(out),
        report_to=["tensorboard"] if tensorboard else [],
    )
    check_pool_for(pool, env_name, config.rescue)
    if dry_run:
        from reharness.training.policy_train import trl_kwargs

        note = (
            "the policy trains in this process on the CPU (use_cpu); with --executor ray its rollouts run "
            "on Ray actors that load the weights after every optimizer step"
        )
        show_plan(launch_plan(ctx, "policy", "trl.GRPOConfig", trl_kwargs(config), [note]), as_json)
        return
    from reharness.cli.progress import progress_display, step_reporter
    from reharness.training.policy_train import train_policy

    # --executor ray: the rollouts on policy actors (weights synced per step); re-anchoring stays local
    with executor_scope(executor, ray_address, ray_actors), progress_display() as progress:
        summary = train_policy(config, progress=step_reporter(progress))
    if as_json:
        keys = ("path", "steps", "rollouts", "rescues", "train_seconds")
        print(json.dumps({k: summary[k] for k in keys}, sort_keys=True))
    else:
        _print_summary(summary)


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="policy training")
    table.add_column("what")
    table.add_column("value")
    table.add_row("steps", str(summary["steps"]))
    table.add_row("rollouts", str(summary["rollouts"]))
    rescues = summary["rescues"]
    table.add_row("rescues (succeeded / tried)", f"{rescues['succeeded']} / {rescues['tried']}")
    table.add_row("train seconds", str(summary["train_seconds"]))
    stdout.print(table)
    stdout.print(f"policy: --agent hf:{summary['path']}", highlight=False)


policy_command = friendly_errors(policy_command)
