"""``reharness experiment r1``: Harness-R1's main table at small scale (see :mod:`reharness.experiments.r1`).

Progress goes to stderr; with ``--json`` stdout holds exactly
``{rows: [{method, env, success, ci_low, ci_high, broken}], average: {method: success}}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from reharness.cli.common import check_specs, friendly_errors, output_dir, stdout

experiment_app = typer.Typer(help="Scripted studies that reproduce the papers' tables at small scale.")


@experiment_app.command("r1")
@friendly_errors
def r1(
    env: Annotated[str, typer.Option(help="Environment: household, shop, db or all.")],
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Output directory (train/, runs/, report.md).")
    ] = Path("r1"),
    agent: Annotated[str, typer.Option(help="Frozen target; {env} is replaced per environment.")] = (
        "tiny:{env}-S"
    ),
    batches: Annotated[int, typer.Option(help="Train batches per environment.")] = 16,
    valid_batches: Annotated[int, typer.Option(help="Valid batches per environment.")] = 4,
    test_batches: Annotated[int, typer.Option(help="Held-out test batches per environment.")] = 4,
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
    temperature: Annotated[
        float, typer.Option(help="Sampling temperature of the learned engineers at evaluation (0: greedy).")
    ] = 0.7,
    grpo_temperature: Annotated[
        float, typer.Option(help="Sampling temperature of the GRPO rollouts (higher: more varied groups).")
    ] = 0.7,
    packets_per_step: Annotated[
        int, typer.Option(help="GRPO packets per optimizer step (k completions each; Harness-R1: 4).")
    ] = 1,
    transfer_agent: Annotated[
        str | None, typer.Option(help="Unseen target for the transfer study, e.g. tiny:{env}-M.")
    ] = None,
    generalisation_seeds: Annotated[
        int, typer.Option(help="Seeds of the held-out generalisation study (0: skip).")
    ] = 3,
    heldout_n: Annotated[int, typer.Option(help="Generalisation: held-out tasks per patch.")] = 50,
    no_ablation: Annotated[bool, typer.Option("--no-ablation", help="Skip the hook ablation.")] = False,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON contract on stdout.")] = False,
) -> None:
    """Train the engineer (packets → SFT → GRPO) and compare no patch, Self-Refine, the operators teacher,
    the SFT-only and the GRPO engineer on held-out batches of the frozen target; then transfer to an unseen
    target, held-out generalisation and hook ablation. Writes report.md and result.json."""
    from reharness.cli.progress import progress_display, step_reporter
    from reharness.cli.train_cmd import resolve_envs
    from reharness.experiments.r1 import R1Config, run_r1

    envs = resolve_envs(env)
    check_specs(envs, agents=[agent, *([transfer_agent] if transfer_agent else [])])  # before any work
    config = R1Config.build(
        envs=envs, agent=agent, out=str(out), batches=batches, valid_batches=valid_batches,
        test_batches=test_batches, batch_size=batch_size, max_steps=max_steps, size=size, sft_steps=sft_steps,
        grpo_steps=grpo_steps, k=k, max_new_tokens=max_new_tokens, max_prompt_chars=max_prompt_chars,
        language=language, per_packet=per_packet, temperature=temperature, seed=seed,
        grpo_temperature=grpo_temperature, packets_per_step=packets_per_step, transfer_agent=transfer_agent,
        generalisation_seeds=generalisation_seeds, heldout_n=heldout_n,
        ablation=not no_ablation,
    )  # fmt: skip

    with progress_display() as progress:

        def notify(text: str) -> None:
            progress.console.print(f"[dim]·[/dim] {text}", highlight=False)

        result = run_r1(config, notify=notify, progress=step_reporter(progress))
    if as_json:
        print(json.dumps(result.contract()))
        return
    table = Table(title="held-out success (95% CI) [broken]")
    for col in ("method", *config.envs, "average"):
        table.add_column(col)
    for method, average in result.average.items():
        cells = []
        for name in config.envs:
            row = next(r for r in result.rows if r.method == method and r.env == name)
            cells.append(f"{row.success:.1%} ({row.ci_low:.1%}–{row.ci_high:.1%}) [{row.broken}]")
        table.add_row(method, *cells, f"{average:.1%}")
    stdout.print(table)
    stdout.print(f"report: {out / 'report.md'}", highlight=False)
