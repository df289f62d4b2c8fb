"""``reharness experiment r1|s``: the papers' tables at small scale (:mod:`reharness.experiments.r1`,
:mod:`reharness.experiments.s`).

Progress goes to stderr; with ``--json`` stdout holds exactly, for ``r1``,
``{rows: [{method, env, success, ci_low, ci_high, broken}], average: {method: success}}`` and, for ``s``,
``{rows: [{method, env, success, ci_low, ci_high, rollouts, target_code_rate, tokens, model_calls}], rank1:
[{env, success, ci_low, ci_high}], average: {method: success}, equal_rollouts: [...]}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reharness.cli.common import (
    BatchConcurrency,
    PacketViews,
    check_specs,
    friendly_errors,
    output_dir,
    stdout,
)
from reharness.cli.scale import Executor, ExecutorKind, RayActors, RayAddress, executor_scope
from reharness.cli.train_policy_cmd import (
    JudgeModel,
    ProfileSamples,
    RewrittenTurns,
    Route,
    RouteName,
    UnseenTasks,
    VoteK,
)
from reharness.training.data import BATCH_CONCURRENCY

experiment_app = typer.Typer(help="Scripted studies that reproduce the papers' tables at small scale.")


@experiment_app.command("r1")
@friendly_errors
def r1(
    env: Annotated[str, typer.Option(help="Environment: a kit with a Harness-R1 benchmark, or all of them.")],
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Output directory (train/, runs/, report.md).")
    ] = Path("r1"),
    agent: Annotated[str, typer.Option(help="Frozen target; {env} is replaced per environment.")] = (
        "tiny:{env}-S"
    ),
    batches: Annotated[int, typer.Option(help="Train batches per environment.")] = 16,
    valid_batches: Annotated[int, typer.Option(help="Valid batches per environment.")] = 4,
    test_batches: Annotated[int, typer.Option(help="Held-out test batches per environment.")] = 6,
    batch_size: Annotated[int, typer.Option(help="Tasks per batch.")] = 10,
    max_steps: Annotated[int | None, typer.Option(help="Target step limit (default: the env's).")] = None,
    size: Annotated[str, typer.Option(help="Tiny engineer size: S or micro.")] = "S",
    sft_steps: Annotated[int, typer.Option(help="SFT optimizer steps.")] = 300,
    grpo_steps: Annotated[int, typer.Option(help="GRPO optimizer steps.")] = 20,
    k: Annotated[int, typer.Option("--k", help="GRPO completions per packet.")] = 4,
    max_new_tokens: Annotated[int, typer.Option(help="Engineer reply budget (tokens).")] = 1536,
    max_prompt_chars: Annotated[
        int, typer.Option(help="Compact prompt budget of the tiny engineer (characters).")
    ] = 1500,
    language: Annotated[
        str | None, typer.Option(help="Tiny engineer's reply language: program (default) or hooks.")
    ] = None,
    per_packet: Annotated[
        int | None, typer.Option(help="SFT: measured program targets per packet (default 2).")
    ] = None,
    resample_invalid: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=64,
            help="Learned engineers: resample a reply that fails the static checks up to N times "
            "(default 8 for repair programs, 0 for hook code).",
        ),
    ] = None,
    no_constrain: Annotated[
        bool,
        typer.Option("--no-constrain", help="Learned program engineers decode without the grammar mask."),
    ] = False,
    packet_views: PacketViews = 1,
    temperature: Annotated[
        float, typer.Option(help="Sampling temperature of the learned engineers at evaluation (0: greedy).")
    ] = 0.7,
    grpo_temperature: Annotated[
        float | None,
        typer.Option(
            help="Sampling temperature of the GRPO rollouts (higher: more varied groups; 1.2 "
            "under the grammar, 0.7 with --no-grpo-constrain)."
        ),
    ] = None,
    packets_per_step: Annotated[
        int, typer.Option(help="GRPO packets per optimizer step (k completions each; Harness-R1: 4).")
    ] = 1,
    grpo_learning_rate: Annotated[
        float, typer.Option(help="GRPO learning rate (tiny engineer default 1e-5).")
    ] = 1e-5,
    grpo_constrain: Annotated[
        bool,
        typer.Option(
            "--grpo-constrain/--no-grpo-constrain",
            help="GRPO samples program replies under the grammar mask too (default on).",
        ),
    ] = True,
    grpo_packets: Annotated[
        str,
        typer.Option(
            help="GRPO packet stream: contested (train packets whose teacher candidates scored "
            "differently) or all."
        ),
    ] = "contested",
    grpo_select: Annotated[
        str,
        typer.Option(
            help="GRPO engineer kept: valid (the step with the best greedy mean Δ on the valid packets, "
            "checkpoints every step; ties to the later) or last."
        ),
    ] = "valid",
    transfer_agent: Annotated[
        str | None, typer.Option(help="Unseen target for the transfer study, e.g. tiny:{env}-M.")
    ] = None,
    generalisation_seeds: Annotated[
        int, typer.Option(help="Seeds of the held-out generalisation study (0: skip).")
    ] = 3,
    heldout_n: Annotated[int, typer.Option(help="Generalisation: held-out tasks per patch.")] = 50,
    no_ablation: Annotated[bool, typer.Option("--no-ablation", help="Skip the hook ablation.")] = False,
    no_hint_probe: Annotated[
        bool, typer.Option("--no-hint-probe", help="Skip the hint-following probe of the target.")
    ] = False,
    no_controls: Annotated[
        bool,
        typer.Option(
            "--no-controls",
            help="Skip the control rows (GRPO on shuffled rewards, a placebo patch, best-of-N teacher search "
            "at GRPO's rerun budget).",
        ),
    ] = False,
    editor: Annotated[
        str | None,
        typer.Option(
            help="A model prompted to edit the harness (the prompted-editor row, method 'prompted'), e.g. "
            "pretrained:smollm2-135m or openai:MODEL@URL; may be added to a finished experiment."
        ),
    ] = None,
    editor_language: Annotated[
        str,
        typer.Option(
            help="What the prompted editor writes: hooks (free hook code) or program (a repair program, "
            "the compact prompt)."
        ),
    ] = "hooks",
    editor_prompt: Annotated[
        str | None,
        typer.Option(
            help="How the prompted editor is asked: full (Harness-R1's prompt) or compact (what a small "
            "context fits). Default: full for hooks, compact for program."
        ),
    ] = None,
    editor_constrain: Annotated[
        bool,
        typer.Option(
            "--editor-constrain",
            help="With --editor-language program: decode the editor under the program grammar "
            "(in-process models only).",
        ),
    ] = False,
    editor_max_tokens: Annotated[
        int, typer.Option(help="Reply budget of the prompted editor (tokens).")
    ] = 1024,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    test_seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the test-split tasks (default: --seed); the same value for every training seed "
            "evaluates independent training runs on the same fresh tasks."
        ),
    ] = None,
    batch_concurrency: BatchConcurrency = BATCH_CONCURRENCY,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON contract on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Train the engineer (packets → SFT → GRPO) and compare no patch, Self-Refine, the operators teacher,
    the SFT-only and the GRPO engineer on held-out batches of the frozen target, with three controls (GRPO
    on shuffled rewards, a placebo patch, best-of-N search at GRPO's rerun budget) and paired intervals;
    then transfer to an unseen target, held-out generalisation and hook ablation. Writes report.md and
    result.json."""
    from reharness.cli.train_cmd import resolve_envs
    from reharness.experiments.r1 import R1Config, run_r1

    envs = resolve_envs(env)
    check_specs(envs, agents=[agent, *([transfer_agent] if transfer_agent else [])])  # before any work
    config = R1Config.build(
        envs=envs, agent=agent, out=str(out), batches=batches, valid_batches=valid_batches,
        test_batches=test_batches, batch_size=batch_size, max_steps=max_steps, size=size, sft_steps=sft_steps,
        grpo_steps=grpo_steps, k=k, max_new_tokens=max_new_tokens, max_prompt_chars=max_prompt_chars,
        language=language, per_packet=per_packet, packet_views=packet_views,
        resample_invalid=resample_invalid, constrain=not no_constrain, temperature=temperature, seed=seed,
        grpo_temperature=grpo_temperature, packets_per_step=packets_per_step,
        grpo_learning_rate=grpo_learning_rate, grpo_constrain=grpo_constrain, grpo_packets=grpo_packets,
        grpo_select=grpo_select,
        transfer_agent=transfer_agent, generalisation_seeds=generalisation_seeds, heldout_n=heldout_n,
        ablation=not no_ablation, batch_concurrency=batch_concurrency, controls=not no_controls,
        test_seed=test_seed, hint_probe=not no_hint_probe, editor=editor, editor_language=editor_language,
        editor_prompt=editor_prompt, editor_constrain=editor_constrain, editor_max_tokens=editor_max_tokens,
    )  # fmt: skip

    with executor_scope(executor, ray_address, ray_actors):  # every stage's episodes
        result = _with_progress(run_r1, config)
    if as_json:
        print(json.dumps(result.contract()))
        return
    table = _method_table(
        "held-out success (95% CI) [broken]",
        result,
        config.envs,
        lambda row: f"{row.success:.1%} ({row.ci_low:.1%}–{row.ci_high:.1%}) [{row.broken}]",
    )
    stdout.print(table)
    stdout.print(f"report: {out / 'report.md'}", highlight=False)


@experiment_app.command("s")
@friendly_errors
def s(
    env: Annotated[str, typer.Option(help="Environment: a kit with a Harness-R1 benchmark, or all of them.")],
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Output directory (ENV/METHOD/, runs, report.md).")
    ] = Path("s"),
    agent: Annotated[
        str,
        typer.Option(
            help="Starting policy: tiny:NAME, hf:DIR, hf:FILE.gguf or pretrained:NAME; {env} is replaced "
            "per environment."
        ),
    ] = "tiny:{env}-S",
    pool: Annotated[
        str | None,
        typer.Option(
            help="Pool directory ({env} is replaced; needed as a template with --env all). Default: evolve "
            "one per environment into OUT/ENV/pool."
        ),
    ] = None,
    methods: Annotated[
        str,
        typer.Option(
            help="Trained methods, comma-separated: none, resample, random, placebo (a neutral-sentence "
            "sibling), vote (profile top-k, then the judges vote), router (--route)."
        ),
    ] = "none,resample,random,placebo,vote,router",
    route: Route = RouteName.validation,
    vote_k: VoteK = 3,
    judge_model: JudgeModel = None,
    profile_samples: ProfileSamples = 2,
    rewritten_turns: Annotated[
        RewrittenTurns, typer.Option(help="Turns a hook rewrote or forced: mask, executed or raw.")
    ] = RewrittenTurns.mask,
    steps: Annotated[int, typer.Option(min=1, help="GRPO optimizer steps of every method.")] = 20,
    k: Annotated[int, typer.Option("--k", min=2, max=64, help="Rollouts per task (GRPO group).")] = 8,
    tasks_per_step: Annotated[int, typer.Option(min=1, help="Train tasks per optimizer step.")] = 4,
    temperature: Annotated[float, typer.Option(min=0.01, help="Training rollout temperature.")] = 1.0,
    learning_rate: Annotated[
        float, typer.Option(min=1e-12, help="GRPO learning rate of every method.")
    ] = 2e-4,
    lora_rank: Annotated[
        int, typer.Option(min=0, help="LoRA rank of every method's training (0: all weights; needs peft).")
    ] = 0,
    unseen_tasks: UnseenTasks = False,
    test_n: Annotated[int, typer.Option(min=1, help="Held-out test tasks per policy.")] = 50,
    equal_rollouts: Annotated[
        bool,
        typer.Option(
            "--equal-rollouts/--no-equal-rollouts",
            help="Also train none on until its rollouts match router's (JSON: equal_rollouts).",
        ),
    ] = True,
    reanchor_every: Annotated[
        int,
        typer.Option(
            min=0,
            help="Routed methods: re-anchor the profile every R steps, plus before step 1 and after training "
            "(0: never — the pool's profile throughout).",
        ),
    ] = 10,
    reanchor_n: Annotated[int, typer.Option(min=1, help="Valid tasks per re-anchoring.")] = 40,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes decoded together.")] = 32,
    seed: Annotated[int, typer.Option(help="Seed (task stream, rollouts, test tasks).")] = 0,
    test_seed: Annotated[
        int | None,
        typer.Option(help="Seed of the held-out test tasks (default --seed): one fresh value for all seeds."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON contract on stdout.")] = False,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Harness-S: train the policy with GRPO in H0 with sibling rescue (router, vote) and its baselines
    (none, resample, random, placebo) from the same start, seed and task stream; evaluate every policy in H0
    on held-out test tasks (plus start, plus the router policy with Rank-1 routing). Writes report.md and
    result.json."""
    from reharness.cli.train_cmd import resolve_envs
    from reharness.experiments.s import SConfig, check_inputs, parse_methods, run_s

    envs = resolve_envs(env)
    check_specs(envs, agents=[agent])
    config = SConfig.build(
        envs=envs, agent=agent, pool=pool, methods=parse_methods(methods), route=route.value, vote_k=vote_k,
        judge_model=judge_model, profile_samples=profile_samples, rewritten_turns=rewritten_turns.value,
        steps=steps, k=k,
        tasks_per_step=tasks_per_step, temperature=temperature, learning_rate=learning_rate,
        lora_rank=lora_rank, unseen_tasks=unseen_tasks, test_n=test_n,
        equal_rollouts=equal_rollouts, reanchor_every=reanchor_every, reanchor_n=reanchor_n,
        concurrency=concurrency, seed=seed, test_seed=test_seed, out=str(out),
    )  # fmt: skip
    check_inputs(config)  # agents and pools, before anything is written
    with executor_scope(executor, ray_address, ray_actors):  # pool, training rollouts, evaluations
        result = _with_progress(run_s, config)
    if as_json:
        print(json.dumps(result.contract()))
        return
    table = _method_table(
        "held-out success in H0 (95% CI) · training rollouts",
        result,
        config.envs,
        lambda row: f"{row.success:.1%} ({row.ci_low:.1%}–{row.ci_high:.1%}) · {row.rollouts}",
    )
    for r in result.rank1:
        table.add_row(
            f"rank1 ({r.env})", *[f"{r.success:.1%}" if e == r.env else "" for e in config.envs], ""
        )
    stdout.print(table)
    stdout.print(f"report: {out / 'report.md'}", highlight=False)


@experiment_app.command("s-seeds")
@friendly_errors
def s_seeds(
    runs: Annotated[
        list[Path], typer.Argument(help="experiment s output directories, one per training seed.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the pooled table as JSON.")] = False,
) -> None:
    """Pool several training seeds' `experiment s` runs (same options, one shared --test-seed) into one
    table, from their stored files only: mean success, paired differences vs start, none and resample over
    the shared test tasks (bootstrap over tasks; Rank-1 also vs the router policy in H0), an ordering only
    where the interval excludes 0; each failure code the pool's siblings target, its rate per episode in H0
    vs the start policy's; then the all-failed training groups each rescuing arm rescued, vs fresh H0
    samples (resample) and a placebo sibling (bootstrap over groups)."""
    from reharness.experiments.s_seeds import pooled

    table_data = pooled(runs)
    if as_json:
        print(json.dumps(table_data))
        return
    table = Table(title=f"held-out success in H0, training seeds {table_data['seeds']}")
    for col in (
        "env",
        "method",
        "success",
        "per seed",
        "targeted codes",
        "vs none",
        "vs resample",
        "vs router",
    ):
        table.add_column(col)
    for row in table_data["rows"]:
        cells = [_interval_cell(row.get(f"vs_{other}")) for other in ("none", "resample", "router")]
        per_seed = " ".join(f"{100 * x:.1f}" for x in row["per_seed"])
        table.add_row(
            row["env"],
            row["method"],
            f"{row['success']:.1%}",
            per_seed,
            "-" if row["target_code_rate"] is None else f"{row['target_code_rate']:.1%}",
            *cells,
        )
    stdout.print(table)
    if table_data["codes"]:
        stdout.print(_code_table(table_data["codes"]))
    if table_data["rescues"]:
        stdout.print(_rescue_table(table_data["rescues"]))


def _code_table(rows: list[dict[str, Any]]) -> Table:
    """Each targeted failure code's rate per episode in H0, pooled over the seeds, against the start's and
    against policy-only training's (``none``)."""
    table = Table(title="episodes with each targeted failure code in H0, pooled over the seeds")
    for col in ("env", "method", "code", "rate", "per seed", "vs start", "vs none"):
        table.add_column(col)
    for row in rows:
        per_seed = " ".join(f"{100 * x:.1f}" for x in row["per_seed"])
        versus = (_interval_cell(row.get(f"vs_{other}")) for other in ("start", "none"))
        cells = (f"{row['rate']:.1%}", per_seed, *versus)
        table.add_row(row["env"], row["method"], row["code"], *cells)
    return table


def _interval_cell(versus: dict[str, Any] | None) -> str:
    """One pooled comparison as ``+Δ [low, high] verdict`` in points, ``-`` where there is none."""
    if versus is None:
        return "-"
    delta, low, high = (100 * versus[k] for k in ("delta", "low", "high"))
    return f"{delta:+.1f} [{low:+.1f}, {high:+.1f}] {versus['verdict']}"


def _rescue_table(rows: list[dict[str, Any]]) -> Table:
    """All-failed training groups each rescuing arm turned into groups with a success, pooled over seeds."""
    table = Table(title="all-failed training groups rescued (≥ 1 success), pooled over the seeds")
    for col in ("env", "method", "rescued", "per seed", "vs resample", "vs placebo"):
        table.add_column(col)
    for row in rows:
        cells = [_interval_cell(row.get(f"vs_{other}")) for other in ("resample", "placebo")]
        per_seed = " ".join("-" if x is None else f"{100 * x:.1f}" for x in row["per_seed"])
        rescued = f"{row['rescued']}/{row['groups']} ({row['share']:.1%})"
        table.add_row(row["env"], row["method"], rescued, per_seed, *cells)
    return table


@experiment_app.command("s-compare")
@friendly_errors
def s_compare(
    run_a: Annotated[Path, typer.Argument(help="experiment s output directory of arm A (the reference).")],
    run_b: Annotated[Path, typer.Argument(help="experiment s output directory of arm B (the ablation).")],
    method: Annotated[str, typer.Option("--method", help="Arm A's method (none, router, rank1, ...).")],
    method_b: Annotated[
        str | None, typer.Option("--method-b", help="Arm B's method; default: the same as --method.")
    ] = None,
    env: Annotated[
        str | None, typer.Option("--env", help="The env of both arms; needed when a run holds several.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Compare one arm of two stored `experiment s` runs on their shared test tasks (an ablation: same
    --test-seed, one option changed), from their stored files only: success and targeted failure codes in H0
    (together, then each code that occurs), B − A paired per task with a bootstrap interval (an ordering
    only where it excludes 0), the rescues each arm made, and the options in which the runs differ."""
    from reharness.experiments.s_compare import compare

    result = compare(run_a, method, run_b, method_b, env)
    if as_json:
        print(json.dumps(result))
        return

    def cell(v: dict[str, Any] | None) -> str:
        if v is None:
            return "- (the runs target different codes)"
        return f"{100 * v['delta']:+.1f} [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}] {v['verdict']}"

    table = Table(title=f"in H0, on {result['n']} shared test tasks")
    for col in ("", "A", "B", "B − A [paired 95% CI]"):
        table.add_column(col)
    a, b = result["a"], result["b"]
    stdout.print(f"A: {a['key']} of {a['run']}\nB: {b['key']} of {b['run']}", highlight=False)
    table.add_row("success", f"{a['success']:.1%}", f"{b['success']:.1%}", cell(result["success"]))
    table.add_row(
        "targeted codes",
        f"{a['target_code_rate']:.1%}",
        f"{b['target_code_rate']:.1%}",
        cell(result["target_code_rate"]),
    )
    for code in result["codes"]:
        table.add_row(f"  {code['code']}", f"{code['a']:.1%}", f"{code['b']:.1%}", cell(code))
    table.add_row("rescues (succeeded/tried)", *(_rescues(side["rescues"]) for side in (a, b)), "")
    stdout.print(table)
    differs = ", ".join(f"{k}: {v[0]!r} → {v[1]!r}" for k, v in result["differs"].items()) or "none"
    stdout.print(f"options that differ: {differs}", highlight=False)


def _rescues(rescues: dict[str, Any] | None) -> str:
    return "-" if not rescues else f"{rescues.get('succeeded', 0)}/{rescues.get('tried', 0)}"


def _with_progress(run: Callable[..., Any], config: Any) -> Any:
    """``run(config, notify=…, progress=…)`` with notes and training steps drawn on one rich display."""
    from reharness.cli.progress import progress_display, step_reporter

    with progress_display() as progress:

        def notify(text: str) -> None:
            progress.console.print(f"[dim]·[/dim] {text}", highlight=False)

        return run(config, notify=notify, progress=step_reporter(progress))


def _method_table(title: str, result: Any, envs: list[str], cell: Callable[[Any], str]) -> Table:
    """One row per method (``result.average``'s order), one column per env plus the average."""
    table = Table(title=title)
    for col in ("method", *envs, "average"):
        table.add_column(col)
    for method, average in result.average.items():
        rows = [next(r for r in result.rows if r.method == method and r.env == name) for name in envs]
        table.add_row(method, *map(cell, rows), f"{average:.1%}")
    return table
