"""``reharness agent``: train, list and evaluate the built-in tiny target agents."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from reharness.cli.common import friendly_errors, output_dir, positive, stderr, stdout
from reharness.cli.progress import batch_progress, time_columns

agent_app = typer.Typer(
    help="Built-in tiny target agents: small LMs trained from scratch on solver demonstrations.",
    no_args_is_help=True,
)


@agent_app.command("train")
@friendly_errors
def train(
    env: Annotated[
        str,
        typer.Option(
            help="Environment: a kit name (`reharness envs` lists them), gym:ID or module.path:attribute."
        ),
    ],
    size: Annotated[str, typer.Option(help="Model size: S or M (micro: a seconds-long test model).")] = "S",
    steps: Annotated[int | None, typer.Option(min=1, help="Optimizer steps (default: the recipe's).")] = None,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="Episodes per step (default: the recipe's).")
    ] = None,
    demos: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Demonstrations (distinct train tasks) to train on; the steps stay, the passes over them "
            "change (default: the recipe's). Fewer leave train tasks unseen (`experiment s "
            "--unseen-tasks`).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of demonstrations, initialisation and data order.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=output_dir, help="Output model directory (default: the cache dir of ENV-SIZE)."
        ),
    ] = None,
    threads: Annotated[
        int | None, typer.Option(min=1, help="torch CPU threads (default: torch's choice).")
    ] = None,
    init: Annotated[
        str | None,
        typer.Option(
            help="Continue training this agent (tiny:NAME or a model directory) instead of starting from "
            "scratch: its tokenizer and weights are kept, the copy warm-up is skipped."
        ),
    ] = None,
    learning_rate: Annotated[
        float | None, typer.Option(callback=positive, help="Peak learning rate.")
    ] = None,
    perturb_prob: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Share of demo turns that are perturbed.")
    ] = None,
    near_miss: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Share of perturbations that are near misses (kits that define them).",
        ),
    ] = None,
    observed_notes: Annotated[
        bool,
        typer.Option(
            "--observed-notes", help="Demos carry harness notes made only of what a hook can observe."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {path, params, train_seconds} as JSON.")
    ] = False,
) -> None:
    """Train a tiny agent on the CPU (demos → tokenizer → model → TRL SFT), from scratch or, with --init,
    further from an existing one. Interrupted, the same command resumes where it stopped (OUT.training/)."""
    from reharness.envs.registry import resolve_env_name
    from reharness.models.tiny.config import recipe_for
    from reharness.models.tiny.registry import cache_dir
    from reharness.training.tiny.train import train_agent

    env_name = resolve_env_name(env).name
    notes = {"interventions": True, "observed_notes": True} if observed_notes else {}
    recipe = recipe_for(env_name, size).with_overrides(
        steps=steps,
        batch_size=batch_size,
        learning_rate=learning_rate,
        perturb_prob=perturb_prob,
        near_miss=near_miss,
        **notes,
    )
    if demos is not None:  # epochs = passes over the demos: steps * batch / demos
        recipe = recipe.with_overrides(epochs=recipe.steps * recipe.batch_size / demos)
    init_dir = resolve_init(init) if init else None
    target = out or cache_dir(f"{env_name}-{size}")
    command = (
        "reharness agent train " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index("train") + 1 :])
        if "train" in sys.argv
        else None
    )
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        *time_columns(),
        console=stderr,
        transient=as_json,
    ) as bar:
        task = bar.add_task(f"{env_name}-{size}: rendering demos", total=recipe.steps, info="")

        def progress(phase: str, step: int, total: int, metrics: dict[str, float]) -> None:
            if phase == "demos":
                bar.update(task, description=f"{env_name}-{size}: rendering {total} demos")
                return
            if phase == "discarded":
                bar.console.print(
                    f"note: {target}.training held an interrupted training of another configuration "
                    "(recipe, seed or --init); discarded, starting over"
                )
                return
            if phase == "truncated":
                cut, kept = metrics["supervised_cut"], metrics["supervised"]
                bar.console.print(
                    f"note: {step:,} of {total:,} demos are longer than the recipe's max_length "
                    f"{recipe.max_length:,} tokens and were cut: {cut:,.0f} supervised tokens "
                    f"({cut / (cut + kept):.1%}) at their ends are not trained on (the provenance's data "
                    "records truncated_demos)"
                )
                return
            if phase == "resume":
                bar.console.print(f"resuming the interrupted training at step {step} of {total}")
            info = (
                f"loss {metrics['loss']:.3f} lr {metrics.get('learning_rate', 0):.2e}"
                if "loss" in metrics
                else None
            )
            label = "copy warm-up" if phase == "copy-warmup" else "training"
            bar.update(task, description=f"{env_name}-{size}: {label}", completed=step, total=total)
            if info:
                bar.update(task, info=info)

        result = train_agent(
            recipe, target, seed=seed, threads=threads, progress=progress, command=command, init=init_dir
        )
    if as_json:
        print(json.dumps(result.as_json()))
    else:
        stdout.print(
            f"trained {env_name}-{size}: {result.params:,} parameters in {result.train_seconds:.0f}s"
        )
        stdout.print(f"  model directory: {result.path}")
        spec = f"tiny:{env_name}-{size}" if out is None else f"hf:{result.path}"
        stdout.print(f"  use it with: reharness run --env {env_name} --agent {spec}")


def resolve_init(spec: str) -> Path:
    """The model directory of ``--init``: ``tiny:NAME`` (shipped or cached, never trained here) or a path."""
    from reharness.core.errors import ConfigError
    from reharness.models.tiny.registry import is_model_dir, locate, parse_name

    if spec.startswith("tiny:"):
        name = spec.removeprefix("tiny:")
        parse_name(name)  # a clear error for a malformed name
        found = locate(name)
        if found is None:
            raise ConfigError(
                f"--init {spec}: that tiny agent is not installed",
                hint="train it first with reharness agent train, or pass a model directory",
            )
        return found
    path = Path(spec.removeprefix("hf:"))
    if not is_model_dir(path):
        raise ConfigError(
            f"--init {spec}: {path} is not a model directory (no config.json and tokenizer.json)",
            hint="pass tiny:NAME or the directory that reharness agent train --out wrote",
        )
    return path


@agent_app.command("list")
@friendly_errors
def list_agents(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List the tiny agents: shipped, cached or not trained yet."""
    from reharness.models.tiny.registry import list_tiny

    infos = [info.as_dict() for info in list_tiny()]
    if as_json:
        print(json.dumps(infos))
        return
    table = Table(title="tiny agents")
    for col in ("name", "where", "params", "train command"):
        table.add_column(col)
    for info in infos:
        where = "shipped" if info["shipped"] else ("cached" if info["path"] else "not trained")
        table.add_row(info["name"], where, f"{info['params']:,}" if info["params"] else "-", info["command"])
    stdout.print(table)


@agent_app.command("eval")
@friendly_errors
def eval_agent(
    agent: Annotated[str, typer.Option(help="A tiny agent name (ENV-SIZE) or a model directory.")],
    env: Annotated[str | None, typer.Option(help="Environment (default: the tiny agent's).")] = None,
    n: Annotated[int, typer.Option(min=1, help="Episodes.")] = 100,
    seed: Annotated[int, typer.Option(help="Run seed (task choice and episode seeds).")] = 0,
    split: Annotated[str, typer.Option(help="Task split.")] = "test",
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Reply token budget.")] = 128,
    no_train: Annotated[
        bool, typer.Option("--no-train", help="Fail instead of training a missing agent.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Greedy success rate and failure mix of a tiny agent in the env's base harness."""
    from reharness.core.errors import ConfigError
    from reharness.models.tiny.registry import parse_name, resolve_tiny
    from reharness.training.tiny.evaluate import evaluate

    path = Path(agent)
    if "/" in agent and not path.is_dir():
        raise ConfigError(
            f"--agent {agent}: {'not a directory' if path.exists() else 'no such directory'}",
            hint="pass a tiny agent name (ENV-SIZE, `reharness agent list`) or a model directory "
            "(reharness agent train --out)",
        )
    if path.is_dir():
        if env is None:
            raise ConfigError(
                "--env is required when --agent is a directory",
                hint="pass --env ENV (the environment the agent was trained on)",
            )
        env_name = env
    else:
        env_name = env or parse_name(agent)[0]
        path = resolve_tiny(agent, train=not no_train, notify=lambda m: stderr.print(m))
    with batch_progress(transient=as_json) as bars:
        bar = bars.add_task(f"{agent} on {env_name}/{split}", total=n)
        report = evaluate(
            path, env_name, n=n, seed=seed, split=split, max_new_tokens=max_new_tokens,
            on_episode=lambda _: bars.advance(bar),
        )  # fmt: skip
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    stdout.print(f"{agent} on {env_name}/{split} (n={report.n}, greedy): success {report.success_rate:.0%}")
    stdout.print(f"  failures: {report.failure_mix}")
    stdout.print(f"  per-step flags: {report.step_flags}; mean steps {report.mean_steps:.1f}")
