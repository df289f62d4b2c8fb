"""``--dry-run`` and ``--accelerate-config`` of the training commands: print the resolved TRL arguments
and the ``accelerate launch`` command line, or run under that command (docs/scale-out.md §3)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Annotated, Any

import typer

from reharness.cli.common import stdout
from reharness.core.errors import ConfigError

DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the resolved TRL trainer arguments (and, with --accelerate-config, the `accelerate "
        "launch` command) and exit: nothing is collected, trained or written.",
    ),
]
AccelerateConfig = Annotated[
    Path | None,
    typer.Option(
        help="An accelerate config file (e.g. examples/scale/accelerate-8gpu-zero3.yaml): run this command "
        "under `accelerate launch --config_file FILE` (with --dry-run: print that command).",
    ),
]

#: options that decide how this process runs, not what the launched one does
_NOT_FORWARDED = {"dry_run", "accelerate_config"}
#: set for the processes of an ``accelerate launch`` that :func:`exec_launch` started: they train, and
#: read the data that was collected before the launch instead of collecting it N times
LAUNCHED = "REHARNESS_LAUNCHED"


def launched() -> bool:
    """Whether this process is one of the processes of a launch started by ``--accelerate-config``."""
    return os.environ.get(LAUNCHED) == "1"


def main_process() -> bool:
    """Whether this process is the launch's first (or the only one): it writes the shared files."""
    return os.environ.get("RANK", "0") == "0"


def command_args(ctx: typer.Context) -> list[str]:
    """This command's arguments as a command line: the subcommand path, then every option that is not at
    its default (options only: the training commands take no positional arguments), without
    ``--dry-run``/``--accelerate-config``: what ``accelerate launch -m reharness`` runs."""
    path: list[str] = []
    node: Any = ctx
    while node.parent is not None:  # the subcommands, without the program's own name
        path.insert(0, str(node.info_name))
        node = node.parent
    args: list[str] = []
    for param in ctx.command.params:
        if param.param_type_name != "option" or param.name in _NOT_FORWARDED:
            continue
        value = ctx.params.get(param.name or "")
        if value is None or value == param.default:
            continue
        name = max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            args.append(name if value else (param.secondary_opts or [name])[0])
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            args += [name, str(getattr(item, "value", item))]
    return [*path, *args]


def launch_plan(
    ctx: typer.Context,
    stage: str,
    trainer: str,
    args: dict[str, Any],
    notes: list[str],
    accelerate: Path | None = None,
) -> dict[str, Any]:
    """A dry run's plan: the trainer's class and arguments, notes, and the command line that would run
    (under ``accelerate launch`` with ``accelerate``, whose file is loaded and checked against ``args``)."""
    plan: dict[str, Any] = {"stage": stage, "trainer": trainer, "args": args, "notes": notes}
    argv = command_args(ctx)
    if accelerate is None:
        plan["command"] = ["reharness", *argv]
        return plan
    from reharness.training.launch import accelerate_summary, check_launch, launch_command

    plan["accelerate"] = accelerate_summary(accelerate)
    check_launch(plan["accelerate"], args)
    plan["command"] = launch_command(accelerate, argv)
    return plan


def show_plan(plan: dict[str, Any], as_json: bool) -> None:
    """Print a dry run: the trainer's class and arguments, the accelerate settings and the command."""
    if as_json:
        print(json.dumps(plan, sort_keys=True, default=str))
        return
    stdout.print(f"{plan['trainer']} arguments (stage {plan['stage']}):", highlight=False)
    for key, value in sorted(plan["args"].items()):
        stdout.print(f"  {key} = {value!r}", highlight=False, soft_wrap=True)
    for note in plan.get("notes", []):
        stdout.print(f"note: {note}", highlight=False, soft_wrap=True)
    accelerate = plan.get("accelerate")
    if accelerate:
        stdout.print("accelerate: " + ", ".join(f"{k} {v}" for k, v in accelerate.items()), highlight=False)
    stdout.print("command:", highlight=False)
    stdout.print("  " + shlex.join(plan["command"]), highlight=False, soft_wrap=True)


def exec_launch(command: list[str]) -> None:
    """Replace this process by ``command`` (``accelerate launch …``); needs ``accelerate`` on the PATH."""
    program = shutil.which(command[0])
    if program is None:
        raise ConfigError(
            f"{command[0]!r} is not on the PATH",
            hint="pip install 'reharness[train]', or run the command printed by --dry-run yourself",
        )
    os.execve(program, command, {**os.environ, LAUNCHED: "1"})
