"""The GPU configurations of ``examples/scale`` (docs/scale-out.md) load and validate on a CPU machine:
the accelerate files through accelerate's own loader, the DeepSpeed file as JSON with its ZeRO stage, and
the GRPO option sets through reharness's stage config into TRL's ``GRPOConfig`` (with vLLM on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

SCALE = Path(__file__).resolve().parents[2] / "examples" / "scale"


@pytest.mark.parametrize(
    ("name", "processes", "kind"),
    [
        ("accelerate-1gpu", 1, "NO"),
        ("accelerate-8gpu-zero3", 8, "DEEPSPEED"),
        ("accelerate-8gpu-zero2", 8, "DEEPSPEED"),
    ],
)
def test_accelerate_configs_load(name: str, processes: int, kind: str) -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(SCALE / f"{name}.yaml"))
    assert config.num_processes == processes and str(config.distributed_type).endswith(kind)
    assert config.use_cpu is False
    if kind == "DEEPSPEED":
        deepspeed = config.deepspeed_config
        if "deepspeed_config_file" in deepspeed:  # relative to the repository root, where accelerate runs
            file = SCALE.parents[1] / deepspeed["deepspeed_config_file"]
            assert json.loads(file.read_text())["zero_optimization"]["stage"] == 2
        else:
            assert deepspeed["zero_stage"] == 3


@pytest.mark.parametrize("mode", ["server", "colocate"])
def test_grpo_vllm_configs_build_trl_configs(mode: str) -> None:
    import torch

    from reharness.training.grpo import GRPOStageConfig, trl_config

    values = yaml.safe_load((SCALE / f"grpo-vllm-{mode}.yaml").read_text())
    stage = GRPOStageConfig(**values)  # the object `train engineer --stage grpo` builds from its flags
    assert stage.use_vllm and stage.vllm_mode == mode and stage.device == "cuda"
    assert stage.k * stage.packets_per_step == 32  # Harness-R1's global batch
    if not torch.cuda.is_available():  # transformers refuses bf16 without a GPU; everything else is checked
        stage = stage.model_copy(update={"bf16": False})
    trl = trl_config(stage, max_new_tokens=1536)
    assert trl.use_vllm and trl.vllm_mode == mode and trl.num_generations == 8
    assert trl.learning_rate == 1e-6 and (trl.epsilon, trl.epsilon_high, trl.beta) == (0.2, 0.28, 0.0)
    if mode == "server":
        assert trl.vllm_server_base_url == "http://vllm-host:8000"


def dry_run(*args: str) -> dict:  # type: ignore[type-arg]
    """``reharness train … --dry-run --json``: the plan it prints (nothing is collected or trained)."""
    from typer.testing import CliRunner

    from reharness.cli.main import app

    result = CliRunner().invoke(app, ["train", *args, "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


GRPO_FLAGS = ("--env", "household", "--stage", "grpo", "--device", "cuda", "--bf16", "--use-vllm")
GRPO_FLAGS += ("--k", "8", "--packets-per-step", "4", "--steps", "375", "--learning-rate", "1e-6")


@pytest.mark.parametrize(
    ("name", "mode", "processes", "deepspeed", "stage"),
    [
        ("accelerate-1gpu", "colocate", 1, None, None),
        ("accelerate-8gpu-zero3", "server", 8, None, 3),
        ("accelerate-8gpu-zero2", "server", 8, "examples/scale/deepspeed-zero2.json", 2),
    ],
)
def test_engineer_dry_run_prints_the_grpo_config_and_the_launch_line(
    name: str, mode: str, processes: int, deepspeed: str | None, stage: int | None, tmp_path: Path
) -> None:
    """docs/scale-out.md §3's command lines: the GRPOConfig arguments they resolve to and the `accelerate
    launch` line, with each examples/scale config (run from the repository root, as the docs do)."""
    import os

    server = ("--vllm-server-url", "http://vllm-host:8000") if mode == "server" else ()
    out = tmp_path / "r1-9b"
    config = SCALE / f"{name}.yaml"
    cwd = Path.cwd()
    os.chdir(SCALE.parents[1])  # the DeepSpeed file path in the accelerate config is relative to the root
    try:
        plan = dry_run(
            "engineer", *GRPO_FLAGS, "--vllm-mode", mode, *server, "--out", str(out),
            "--accelerate-config", str(config),
        )  # fmt: skip
    finally:
        os.chdir(cwd)
    args = plan["args"]
    assert plan["trainer"] == "trl.GRPOConfig" and plan["stage"] == "grpo"
    assert args["use_vllm"] is True and args["vllm_mode"] == mode and args["bf16"] is True
    assert (
        args["use_cpu"] is False and args["num_generations"] == 8 and args["gradient_accumulation_steps"] == 4
    )
    assert args["learning_rate"] == 1e-6 and (args["epsilon"], args["epsilon_high"], args["beta"]) == (
        0.2,
        0.28,
        0,
    )
    assert args["vllm_server_base_url"] == ("http://vllm-host:8000" if mode == "server" else None)
    assert args["output_dir"] == str(out / "grpo" / "checkpoints") and args["max_steps"] == 375
    accelerate = plan["accelerate"]
    assert accelerate["num_processes"] == processes and accelerate.get("deepspeed_config_file") == deepspeed
    assert accelerate.get("zero_stage") == stage
    command = plan["command"]
    assert command[:6] == ["accelerate", "launch", "--config_file", str(config), "-m", "reharness"]
    assert command[6:8] == ["train", "engineer"] and "--dry-run" not in command
    assert "--accelerate-config" not in command
    for flag in ("--use-vllm", "--bf16", "--device", "--packets-per-step"):
        assert flag in command
    if mode == "server":  # colocate is the default: options at their default are left out of the line
        assert command[command.index("--vllm-mode") + 1] == mode
    else:
        assert "--vllm-mode" not in command
    assert not out.exists()  # a dry run writes nothing
    if not __import__("torch").cuda.is_available():  # transformers refuses bf16 without a GPU
        args = args | {"bf16": False}
    from trl import GRPOConfig

    built = GRPOConfig(**args)  # the printed arguments are a valid GRPOConfig
    assert built.use_vllm and built.vllm_mode == mode


def test_sft_and_policy_dry_runs(tmp_path: Path) -> None:
    sft = dry_run(
        "engineer", "--env", "household", "--stage", "sft", "--steps", "40", "--out", str(tmp_path / "e")
    )
    assert sft["trainer"] == "trl.SFTConfig" and sft["args"]["max_steps"] == 40
    assert sft["args"]["use_cpu"] is True and sft["command"][:3] == ["reharness", "train", "engineer"]
    from trl import SFTConfig

    SFTConfig(**sft["args"])
    policy = dry_run(
        "policy", "--env", "household", "--rescue", "none", "--k", "4", "--tasks-per-step", "2",
        "--micro-batches", "2", "--out", str(tmp_path / "p"), "--executor", "ray",
    )  # fmt: skip
    args = policy["args"]
    assert policy["trainer"] == "trl.GRPOConfig" and args["num_generations"] == 4
    assert args["per_device_train_batch_size"] == 4 and args["gradient_accumulation_steps"] == 2
    assert policy["command"][-2:] == ["--executor", "ray"]
    assert not (tmp_path / "e").exists() and not (tmp_path / "p").exists()


def test_a_gpu_launch_of_a_cpu_run_is_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reharness.cli.main import app

    args = ["train", "engineer", "--env", "household", "--stage", "grpo", "--out", str(tmp_path / "x")]
    args += ["--accelerate-config", str(SCALE / "accelerate-1gpu.yaml"), "--dry-run"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert (
        "launches on GPUs, but the run trains on the CPU" in result.output
        and "--device cuda" in result.output
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"zero_optimization": {"stage": 2}}', 2),
        ('{"zero_optimization": {"stage": "auto"}}', "auto"),
        ('{"zero_optimization": {"stage": "3"}}', 3),
        ('{"train_batch_size": "auto"}', None),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"zero_optimization": 3}', "zero_optimization in the DeepSpeed file"),
        ('{"zero_optimization": {"stage": "fast"}}', "stage in the DeepSpeed file"),
        ("{ nope", "is not JSON"),
    ],
)
def test_the_deepspeed_file_gives_its_stage_or_a_clear_error(
    content: str, expected: object, tmp_path: Path
) -> None:
    """The ZeRO stage of the DeepSpeed file an accelerate config names: an integer, "auto" kept as is,
    absent; anything else is a config_error that names the file (never a traceback)."""
    pytest.importorskip("accelerate")
    from reharness.core.errors import ConfigError
    from reharness.training.launch import accelerate_summary

    file = tmp_path / "ds.json"
    file.write_text(content, encoding="utf-8")
    config = yaml.safe_load((SCALE / "accelerate-8gpu-zero2.yaml").read_text(encoding="utf-8"))
    config["deepspeed_config"]["deepspeed_config_file"] = str(file)
    accelerate = tmp_path / "accelerate.yaml"
    accelerate.write_text(yaml.safe_dump(config), encoding="utf-8")
    if isinstance(expected, str) and expected != "auto":
        with pytest.raises(ConfigError, match="DeepSpeed file|not JSON") as caught:
            accelerate_summary(accelerate)
        assert expected in caught.value.message and str(file) in caught.value.message
    else:
        assert accelerate_summary(accelerate)["zero_stage"] == expected


def test_a_launch_needs_the_collected_data_and_one_ray_cluster(tmp_path: Path) -> None:
    """``--accelerate-config`` without ``--dry-run`` would run the command in N processes: refused while
    the data stage is incomplete (each would collect into OUT/data), and refused with ``--executor ray``
    without ``--ray-address`` (each would start its own Ray instance). Nothing is collected or written."""
    from typer.testing import CliRunner

    from reharness.cli.main import app

    out = tmp_path / "x"
    args = ["train", "engineer", "--env", "household", "--stage", "sft", "--out", str(out)]
    args += ["--accelerate-config", str(SCALE / "accelerate-1gpu.yaml"), "--device", "cuda"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert "data collection" in result.output and "incomplete (20 of 20 batches" in result.output
    assert "--stage data" in result.output
    for extra in ([], ["--dry-run"]):
        result = CliRunner().invoke(app, [*args, "--executor", "ray", *extra])
        assert result.exit_code != 0
        assert "needs --ray-address" in result.output and "own Ray instance" in result.output
    assert not out.exists()


@pytest.mark.parametrize("command", ["engineer", "policy"])
def test_a_dry_run_refuses_ray_options_without_executor_ray(command: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reharness.cli.main import app

    args = ["train", command, "--env", "household", "--out", str(tmp_path / "x"), "--dry-run"]
    result = CliRunner().invoke(app, [*args, "--ray-actors", "2"])
    assert result.exit_code != 0
    assert "--ray-actors only applies to --executor ray" in result.output


def test_a_launched_process_reads_the_data_and_never_collects(tmp_path: Path) -> None:
    """A process of the launch (``REHARNESS_LAUNCHED=1``, set by ``--accelerate-config``) finds the data
    stage incomplete: it stops with the same clear error instead of collecting into OUT/data."""
    from typer.testing import CliRunner

    from reharness.cli.main import app
    from reharness.cli.train_launch import LAUNCHED

    out = tmp_path / "x"
    args = ["train", "engineer", "--env", "household", "--stage", "sft", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={LAUNCHED: "1", "RANK": "1"})
    assert result.exit_code != 0
    assert "incomplete (20 of 20 batches" in result.output and "--stage data" in result.output
    assert not (out / "data").exists() and not (out / "sft").exists()
