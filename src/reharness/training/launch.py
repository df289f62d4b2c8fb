"""What a training command would run, without training: the resolved TRL arguments and the ``accelerate
launch`` command line (``reharness train engineer|policy --dry-run``, docs/scale-out.md §3).

:func:`accelerate_summary` loads an accelerate configuration file with accelerate's own loader (the one
``accelerate launch --config_file`` uses) and checks the DeepSpeed file it names; :func:`launch_command`
is the command line a multi-GPU run uses. Nothing here imports torch; accelerate loads only when a
configuration file is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError


def accelerate_summary(path: Path) -> dict[str, Any]:
    """The settings of an accelerate config file that decide the launch (processes, machines, distributed
    type, mixed precision, DeepSpeed stage or file), or a :class:`ConfigError` naming what is wrong."""
    try:
        from accelerate.commands.config.config_args import load_config_from_file
    except ImportError:
        raise ConfigError(
            "--accelerate-config needs the 'accelerate' package", hint="pip install 'reharness[train]'"
        ) from None
    if not path.is_file():
        raise ConfigError(
            f"--accelerate-config {str(path)!r} is not a file",
            hint="pass an accelerate config (`accelerate config`, or one of examples/scale/*.yaml)",
        )
    try:
        config = load_config_from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - accelerate raises ValueError/TypeError/yaml errors
        raise ConfigError(
            f"--accelerate-config {str(path)!r} is not a valid accelerate config: {exc}",
            hint="write it with `accelerate config`, or start from examples/scale/accelerate-1gpu.yaml",
        ) from None
    summary: dict[str, Any] = {
        "config_file": str(path),
        "num_processes": int(config.num_processes),
        "num_machines": int(config.num_machines),
        "distributed_type": str(config.distributed_type).rsplit(".", 1)[-1],
        "mixed_precision": None if config.mixed_precision is None else str(config.mixed_precision),
        "use_cpu": bool(config.use_cpu),
    }
    deepspeed = dict(getattr(config, "deepspeed_config", None) or {})
    if summary["distributed_type"] == "DEEPSPEED":
        file = deepspeed.get("deepspeed_config_file")
        if file:
            summary["deepspeed_config_file"] = str(file)
            summary["zero_stage"] = _zero_stage(Path(file))
        else:
            summary["zero_stage"] = deepspeed.get("zero_stage")
    return summary


def _zero_stage(file: Path) -> int | str | None:
    """The ZeRO stage of a DeepSpeed JSON file (relative paths: to the directory accelerate runs in)."""
    if not file.is_file():
        raise ConfigError(
            f"the accelerate config names the DeepSpeed file {str(file)!r}, which does not exist here",
            hint="run from the directory the path is relative to (e.g. the repository root for "
            "examples/scale), or fix deepspeed_config_file",
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the DeepSpeed file {str(file)!r} is not JSON: {exc}", hint="fix it") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"the DeepSpeed file {str(file)!r} holds a JSON {type(data).__name__}, not an object",
            hint='write a DeepSpeed config object, e.g. {"zero_optimization": {"stage": 2}}',
        )
    zero = data.get("zero_optimization")
    if zero is None:
        return None
    if not isinstance(zero, dict):
        raise ConfigError(
            f"zero_optimization in the DeepSpeed file {str(file)!r} is not an object",
            hint='write it as {"stage": 0|1|2|3, ...}',
        )
    stage = zero.get("stage")
    if stage is None or isinstance(stage, int) and not isinstance(stage, bool):
        return stage
    if isinstance(stage, str) and stage.strip().isdigit():
        return int(stage)
    if stage == "auto":  # filled in by the integration that launches DeepSpeed: printed as is
        return stage
    raise ConfigError(
        f"zero_optimization.stage in the DeepSpeed file {str(file)!r} is {stage!r}",
        hint='use 0, 1, 2 or 3 (or "auto")',
    )


def launch_command(config_file: Path, args: list[str]) -> list[str]:
    """``accelerate launch --config_file FILE -m reharness ARGS``."""
    return ["accelerate", "launch", "--config_file", str(config_file), "-m", "reharness", *args]


def check_launch(accelerate: dict[str, Any], trl_args: dict[str, Any]) -> None:
    """Refuse a launch whose processes cannot run the trainer's arguments (a GPU launch of a CPU run)."""
    if not accelerate["use_cpu"] and trl_args.get("use_cpu"):
        raise ConfigError(
            f"--accelerate-config {accelerate['config_file']!r} launches on GPUs, "
            "but the run trains on the CPU",
            hint="add --device cuda (and --bf16), or drop --accelerate-config",
        )
