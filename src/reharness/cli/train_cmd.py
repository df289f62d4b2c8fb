"""``reharness train engineer``: collect packets, cold-start SFT and GRPO of the harness engineer.

Layout of ``--out DIR``: ``DIR/data`` (batch records, ``packets.parquet``, ``sft.parquet``, cached runs),
``DIR/sft`` and ``DIR/grpo`` (HF model directories, usable as ``--engineer hf:DIR/grpo`` in
``reharness improve``). Every stage first completes the data collection (resumable: batches already recorded
are skipped), then trains; the resolved options of each stage are written to ``train_config.json`` in its
directory before anything runs. Progress goes to stderr; with ``--json`` stdout holds one JSON summary.
``--executor ray`` plays the collection's batches and the GRPO reward's paired reruns on Ray actors;
``--dry-run`` prints the stage's TRL arguments (and, with ``--accelerate-config``, the ``accelerate launch``
line) without collecting or training (:mod:`reharness.cli.train_launch`). Without ``--dry-run``,
``--accelerate-config`` needs the data stage complete: the launched processes read it, never collect it.
"""

from __future__ import annotations

import asyncio
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from reharness.cli.common import (
    BatchConcurrency,
    PacketViews,
    check_specs,
    friendly_errors,
    output_dir,
    stdout,
)
from reharness.cli.progress import progress_display, step_reporter
from reharness.cli.scale import (
    Executor,
    ExecutorKind,
    RayActors,
    RayAddress,
    check_executor_options,
    executor_scope,
)
from reharness.cli.train_launch import (
    AccelerateConfig,
    DryRun,
    exec_launch,
    launch_plan,
    launched,
    main_process,
    show_plan,
)
from reharness.cli.train_policy_cmd import policy_command
from reharness.core.errors import ConfigError
from reharness.engineer.factory import ENGINEERS
from reharness.runtime.r1.factory import r1_benchmarks
from reharness.training.data import BATCH_CONCURRENCY

train_app = typer.Typer(
    help="Train harness engineers (Harness-R1: SFT, then GRPO) and agent policies (Harness-S: GRPO with "
    "sibling rescue).",
    no_args_is_help=True,
)
train_app.command("policy")(policy_command)
STAGES = ("data", "sft", "grpo")
#: options of a collection that may grow on a rerun (more batches); anything else must match
_GROWABLE = {"train_batches", "valid_batches", "concurrency", "batch_concurrency", "candidate_timeout_s"}
CONFIG_FILE = "train_config.json"


def resolve_envs(env: str) -> list[str]:
    """``all`` → every built-in environment; otherwise the one named (checked, with did-you-mean)."""
    from reharness.envs.registry import resolve_env_name

    if env.strip() == "all":
        return list(r1_benchmarks().values())
    return [resolve_env_name(env.strip()).name]


def _write_config(directory: Path, data: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    (directory / CONFIG_FILE).write_text(text, encoding="utf-8")


def _check_same_collection(directory: Path, config: Any) -> None:
    """Refuse to mix records of different collections in one data directory."""
    file = directory / CONFIG_FILE
    if not file.is_file():
        return
    old = json.loads(file.read_text(encoding="utf-8"))
    new = config.model_dump(mode="json")
    for key in sorted(set(old) | set(new)):
        if key not in _GROWABLE and old.get(key) != new.get(key):
            raise ConfigError(
                f"{directory} holds packets collected with {key}={old.get(key)!r}, not {new.get(key)!r}",
                hint="use another --out, or the options of the first collection",
            )


def collect(config: Any, directory: Path, progress: Progress) -> list[dict[str, Any]]:
    """Run (or finish) the data collection with a progress bar; export the Parquet datasets."""
    from reharness.training.data import Collector, export

    _check_same_collection(directory, config)
    _write_config(directory, config.model_dump(mode="json"))
    collector = Collector(config, directory)
    bar = progress.add_task("packets", total=len(collector.plan()), note="")

    def on_batch(key: str, record: dict[str, Any] | None) -> None:
        note = f"{key} (recorded)" if record is None else f"{key}: Δ {record.get('delta') or 0:+.3f}"
        progress.update(bar, advance=1, note=note)

    records = asyncio.run(Collector(config, directory, on_batch=on_batch).run())
    export(directory, records)
    return records


@train_app.command("engineer")
@friendly_errors
def engineer(
    ctx: typer.Context,
    env: Annotated[str, typer.Option(help="Environment: a kit with a Harness-R1 benchmark, or all of them.")],
    stage: Annotated[str, typer.Option(help="data (collect only), sft or grpo.")] = "sft",
    out: Annotated[
        Path, typer.Option(callback=output_dir, help="Output directory (data/, sft/, grpo/ inside).")
    ] = Path("engineer"),
    agent: Annotated[
        str, typer.Option(help="Frozen target agent spec; {env} is replaced per environment.")
    ] = "tiny:{env}-S",
    teacher: Annotated[str, typer.Option(help=f"Teacher engineer: {ENGINEERS.describe()}.")] = "operators",
    base: Annotated[
        Path | None, typer.Option(help="SFT: a local Hugging Face model dir to fine-tune (default: tiny).")
    ] = None,
    size: Annotated[str, typer.Option(help="Tiny engineer size: S or micro.")] = "S",
    sft: Annotated[
        Path | None, typer.Option(help="GRPO: SFT engineer to start from (default OUT/sft).")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="GRPO: completions per packet.")] = 8,
    steps: Annotated[
        int | None, typer.Option(min=1, help="Optimizer steps (default: sft 300, grpo 20).")
    ] = None,
    batches: Annotated[int, typer.Option(help="Train batches (packets) per environment.")] = 16,
    valid_batches: Annotated[int, typer.Option(help="Valid-split batches per environment.")] = 4,
    batch_size: Annotated[int, typer.Option(help="Tasks per batch.")] = 10,
    teacher_k: Annotated[int, typer.Option(help="Teacher proposals per packet.")] = 4,
    max_steps: Annotated[int | None, typer.Option(help="Target step limit (default: the env's).")] = None,
    packets_per_step: Annotated[int, typer.Option(help="GRPO: packets per optimizer step.")] = 1,
    constrain: Annotated[
        bool,
        typer.Option(
            "--constrain", help="GRPO: sample a repair-program engineer's replies under the program grammar."
        ),
    ] = False,
    grpo_packets: Annotated[
        str,
        typer.Option(
            help="GRPO packet stream: all, or contested (packets whose teacher candidates scored "
            "differently)."
        ),
    ] = "all",
    learning_rate: Annotated[float | None, typer.Option(help="Learning rate (default per stage).")] = None,
    max_prompt_chars: Annotated[int, typer.Option(help="Compact prompt budget (characters).")] = 1500,
    language: Annotated[
        str | None,
        typer.Option(help="SFT reply language: program (default, tiny) or hooks (default with --base)."),
    ] = None,
    per_packet: Annotated[
        int | None, typer.Option(help="SFT: measured program targets per packet (default 2).")
    ] = None,
    packet_views: PacketViews = 1,
    max_new_tokens: Annotated[
        int | None,
        typer.Option(min=1, help="Reply budget in tokens (default: sft 1536, grpo the SFT engineer's)."),
    ] = None,
    save_steps: Annotated[int, typer.Option(help="GRPO: checkpoint every N steps.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed (tasks, teacher, training).")] = 0,
    concurrency: Annotated[int, typer.Option(help="Episodes run concurrently per batch.")] = 8,
    batch_concurrency: BatchConcurrency = BATCH_CONCURRENCY,
    tensorboard: Annotated[bool, typer.Option("--tensorboard", help="Log curves to TensorBoard.")] = False,
    device: Annotated[str, typer.Option(help="cpu, or cuda (GPUs through accelerate).")] = "cpu",
    bf16: Annotated[bool, typer.Option("--bf16", help="bfloat16 training (cuda only).")] = False,
    use_vllm: Annotated[bool, typer.Option("--use-vllm", help="GRPO: generate with vLLM (cuda).")] = False,
    vllm_mode: Annotated[str, typer.Option(help="GRPO with vLLM: colocate or server.")] = "colocate",
    vllm_server_url: Annotated[
        str | None, typer.Option(help="GRPO, --vllm-mode server: URL of `trl vllm-serve`.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary on stdout.")] = False,
    dry_run: DryRun = False,
    accelerate_config: AccelerateConfig = None,
    executor: Executor = ExecutorKind.local,
    ray_address: RayAddress = None,
    ray_actors: RayActors = None,
) -> None:
    """Train a harness engineer on measured outcomes: packets from train batches of a frozen target,
    teacher patches validated by paired rerun (SFT set), cold-start SFT, then GRPO (reward: paired rerun)."""
    from reharness.training.data import DataConfig

    check_executor_options(executor, ray_address, ray_actors)  # a dry run too
    if stage not in STAGES:
        raise ConfigError(f"unknown --stage {stage!r}", hint=f"use one of: {', '.join(STAGES)}")
    if size not in ("S", "micro"):
        raise ConfigError(f"unknown --size {size!r}", hint="use S or micro")
    envs = resolve_envs(env)
    check_specs(envs, agents=[agent], engineers=[teacher])  # before any file is written
    data_config = DataConfig.build(
        envs=envs,
        agent=agent,
        teacher=teacher,
        train_batches=batches,
        valid_batches=valid_batches,
        batch_size=batch_size,
        teacher_k=teacher_k,
        max_steps=max_steps,
        seed=seed,
        concurrency=concurrency,
        batch_concurrency=batch_concurrency,
    )
    report_to = ["tensorboard"] if tensorboard else []
    if tensorboard and not any(find_spec(name) for name in ("tensorboard", "tensorboardX")):
        raise ConfigError("--tensorboard needs the tensorboard package", hint="pip install tensorboard")
    stage_config: Any = None
    if stage == "sft":
        from reharness.training.engineer_model import check_model_dir
        from reharness.training.sft import SFTStageConfig

        if base is not None:  # before any batch is collected
            check_model_dir(base, "--base", "pass a local Hugging Face model directory, or omit --base")

        stage_config = SFTStageConfig.build(
            data=str(out / "data"), out=str(out / "sft"), envs=envs, base=str(base) if base else None,
            size=size, max_prompt_chars=max_prompt_chars, max_new_tokens=max_new_tokens or 1536,
            steps=steps or 300, learning_rate=learning_rate, seed=seed, report_to=report_to, device=device,
            bf16=bf16, language=language, per_packet=per_packet, packet_views=packet_views,
        )  # fmt: skip
    elif stage == "grpo":
        from reharness.training.grpo import GRPOStageConfig, check_sft_dir

        stage_config = GRPOStageConfig.build(
            data=str(out / "data"), sft=str(sft or out / "sft"), out=str(out / "grpo"), envs=envs, k=k,
            packets_per_step=packets_per_step, steps=steps or 20, max_new_tokens=max_new_tokens,
            save_steps=save_steps, seed=seed, report_to=report_to, device=device, bf16=bf16,
            use_vllm=use_vllm, vllm_mode=vllm_mode, vllm_server_base_url=vllm_server_url,
            constrain=constrain, packets=grpo_packets,
            **({"learning_rate": learning_rate} if learning_rate else {}),
        )  # fmt: skip
        if not dry_run:  # a dry run may describe a GRPO stage whose SFT engineer is not trained yet
            check_sft_dir(stage_config.sft)  # before any batch runs
    if accelerate_config is not None:
        _check_launchable(data_config, out / "data", executor, ray_address, dry_run)
    if dry_run or accelerate_config is not None:
        plan = _launch_plan(ctx, stage, stage_config, accelerate_config)
        if dry_run:
            show_plan(plan, as_json)
            return
        exec_launch(plan["command"])
    summary: dict[str, Any] = {"stage": stage, "out": str(out)}
    # the data collection's batches and the GRPO reward's paired reruns run on the executor
    with executor_scope(executor, ray_address, ray_actors), progress_display() as progress:
        if launched():  # one of N processes of a launch: the data was complete before it, read it
            from reharness.training.data import read_records

            _check_launchable(data_config, out / "data", executor, ray_address, dry_run=False)
            records = read_records(out / "data")
        else:
            records = collect(data_config, out / "data", progress)
        summary["data"] = _data_summary(records)
        if stage_config is not None:
            if main_process():  # one writer of the stage's options under a launch
                _write_config(Path(stage_config.out), stage_config.model_dump(mode="json"))
            if stage == "sft":
                from reharness.training.sft import run_sft

                result = run_sft(stage_config, progress=step_reporter(progress))
            else:
                from reharness.training.grpo import run_grpo

                result = run_grpo(stage_config, progress=step_reporter(progress))
            summary[stage] = {k: v for k, v in result.items() if k != "config"}
            summary["engineer"] = f"hf:{stage_config.out}"
    if as_json:
        print(json.dumps(summary, sort_keys=True))
    else:
        _print_summary(summary)


def _check_launchable(
    data_config: Any, data: Path, executor: ExecutorKind, ray_address: str | None, dry_run: bool
) -> None:
    """Refuse an ``accelerate launch`` whose N processes would each collect data into ``data`` (the data
    stage must be complete first), or each start its own Ray instance (they must join one cluster)."""
    if executor == ExecutorKind.ray and ray_address is None:
        raise ConfigError(
            "--executor ray with --accelerate-config needs --ray-address: every launched process would "
            "start its own Ray instance",
            hint="start a cluster (`ray start --head`) and add --ray-address auto (or HOST:PORT), or drop "
            "--executor ray (the data stage runs before the launch)",
        )
    if dry_run:  # a dry run may describe a launch whose data is not collected yet
        return
    from reharness.training.data import Collector, read_records, record_key

    _check_same_collection(data, data_config)
    planned = {record_key(*batch) for batch in Collector(data_config, data).plan()}
    missing = planned - {r.get("key") for r in read_records(data)}
    if missing:
        raise ConfigError(
            f"the data collection in {str(data)!r} is incomplete ({len(missing)} of {len(planned)} batches "
            "missing): every process of the launch would collect into it",
            hint="run the same command with --stage data (and without --accelerate-config) first, then "
            "launch the training stage",
        )


def _launch_plan(
    ctx: typer.Context, stage: str, stage_config: Any, accelerate: Path | None
) -> dict[str, Any]:
    """What ``--dry-run`` prints: the stage's TRL arguments and the command line that would run."""
    if stage_config is None:
        raise ConfigError(
            "--stage data trains nothing: there are no trainer arguments to print or launch",
            hint="use --stage sft or --stage grpo with --dry-run/--accelerate-config",
        )
    notes: list[str] = []
    if stage == "grpo":
        from reharness.training.grpo import DEFAULT_REPLY_TOKENS, check_sft_dir, reply_budget, trl_kwargs

        try:
            sft_info: dict[str, Any] | None = check_sft_dir(stage_config.sft)
        except ConfigError:  # a dry run of a GRPO stage whose SFT engineer is not trained yet
            sft_info = None
        if sft_info is None and not stage_config.max_new_tokens:
            notes.append(
                "max_completion_length: the SFT engineer's reply budget "
                f"(no SFT engineer yet: {DEFAULT_REPLY_TOKENS})"
            )
        trainer, args = "trl.GRPOConfig", trl_kwargs(stage_config, reply_budget(stage_config, sft_info))
    else:
        from reharness.training.sft import sft_kwargs

        notes.append("max_length: the engineer model's max_position_embeddings (known once it is built)")
        trainer, args = "trl.SFTConfig", sft_kwargs(stage_config, max_length=0)
        args.pop("max_length")
    return launch_plan(ctx, stage, trainer, args, notes, accelerate)


def _data_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    from reharness.training.data import packet_rows, sft_rows

    return {
        "batches": len(records),
        "packets": {s: len(packet_rows(records, s)) for s in ("train", "valid")},
        "sft_examples": {s: len(sft_rows(records, s)) for s in ("train", "valid")},
    }


def _print_summary(summary: dict[str, Any]) -> None:
    data = summary["data"]
    table = Table(title=f"engineer training: stage {summary['stage']}")
    table.add_column("what")
    table.add_column("value")
    table.add_row("batches collected", str(data["batches"]))
    table.add_row("packets (train / valid)", f"{data['packets']['train']} / {data['packets']['valid']}")
    table.add_row(
        "SFT examples (train / valid)", f"{data['sft_examples']['train']} / {data['sft_examples']['valid']}"
    )
    result = summary.get(summary["stage"])
    if isinstance(result, dict):
        table.add_row("parameters", f"{result.get('params', 0):,}")
        if "final_loss" in result:
            table.add_row("final loss (eval)", f"{result['final_loss']:.4f} ({result.get('eval_loss')})")
        if result.get("reward_curve"):
            curve = result["reward_curve"]
            table.add_row("reward (first → last step)", f"{curve[0]:+.4f} → {curve[-1]:+.4f}")
            timing = result["timing"]
            table.add_row(
                "seconds per step (rerun share)", f"{timing['seconds_per_step']} ({timing['rerun_share']})"
            )
    stdout.print(table)
    if "engineer" in summary:
        stdout.print(f"engineer: --engineer {summary['engineer']}", highlight=False)
