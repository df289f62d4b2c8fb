"""Shared CLI helpers: consoles, the one error boundary and the typed option validators.

Bad input never ends in a traceback. Two mechanisms, shared by every command:

- **Option validators** (click parameter types and typer callbacks, checked while the command line is
  parsed, before any work): numeric ranges (``min=``), choices (:class:`Isolation`), and the path kinds
  below (:func:`output_dir`, :func:`input_file`, :func:`run_dir`). A bad value prints click's
  ``Invalid value for '--OPTION': … ; <fix>`` and exits 2.
- **The error boundary** (:func:`friendly_errors`, around every command body): a :class:`ReharnessError`
  prints ``error: [code] message`` plus ``how to fix: hint``; an ``OSError`` that still escapes (a disk that
  fills up, a file removed under our feet) prints the path and the system's reason; a corrupt SQLite index
  says how to rebuild it. All exit 2.
"""

from __future__ import annotations

import enum
import functools
import os
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

from reharness.core.errors import ReharnessError, options_error
from reharness.core.secrets import redact

stdout = Console()
stderr = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)


def _print_error(code: str, message: str, hint: str | None) -> None:
    """The one error format of the CLI (secrets redacted)."""
    stderr.print("error", style="bold red", end="")
    stderr.print(f": [{code}] {redact(message)}", highlight=False, markup=False, soft_wrap=True)
    if hint:
        stderr.print(f"  how to fix: {redact(hint)}", highlight=False, markup=False, soft_wrap=True)


def friendly_errors(fn: F) -> F:
    """Print :class:`ReharnessError` as 'error: …' plus the fix (secrets redacted), and exit with code 2
    (or the error's ``exit_code``; no traceback); likewise an ``OSError`` about a path (named, with the
    system's reason) and an unreadable SQLite index."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ReharnessError as exc:
            _print_error(exc.code, exc.message, exc.hint)
            raise typer.Exit(getattr(exc, "exit_code", 2)) from None
        except sqlite3.DatabaseError as exc:  # e.g. OUT/index.sqlite overwritten or truncated
            _print_error(
                "store_error",
                f"a SQLite index could not be read: {exc}",
                "index.sqlite is derived from the episodes.jsonl files: delete OUT/index.sqlite and rerun "
                "the command to rebuild it",
            )
            raise typer.Exit(2) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            _print_error(
                "os_error",
                f"{where}{exc.strerror or exc}",
                "check that the path exists, is of the right kind (file or directory) and is writable",
            )
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def build_options(model: type[M], command: str, **values: Any) -> M:
    """``model(**values)`` for a config made of command-line options; a ``ValidationError`` becomes a
    :class:`~reharness.core.errors.ConfigError` naming the first bad ``--option`` (caught by the boundary)."""
    try:
        return model(**values)
    except ValidationError as exc:
        raise options_error(exc, command) from None


def check_specs(envs: list[str], agents: Sequence[str] = (), engineers: Sequence[str] = ()) -> None:
    """Check agent specs (``{env}`` replaced by each of ``envs``) and engineer specs without loading any
    model, so that a command with a bad one fails before it creates any file or runs any episode."""
    from reharness.engineer.factory import check_engineer_spec
    from reharness.runtime.agent_specs import check_agent_spec

    for spec in agents:
        for env in envs:
            check_agent_spec(spec.replace("{env}", env))
    for spec in engineers:
        check_engineer_spec(spec)


class Isolation(enum.StrEnum):
    """``--isolation``: the sandbox level of patch code (a click choice, so a typo fails while parsing)."""

    standard = "standard"
    strict = "strict"


def positive(ctx: typer.Context, param: typer.CallbackParam, value: float | None) -> float | None:
    """Typer callback of a number that must be greater than 0 (click's ``min=`` only has closed bounds)."""
    if value is not None and not ctx.resilient_parsing and not value > 0:
        raise typer.BadParameter(f"{value} is not greater than 0. Pass a positive number.")
    return value


# ------------------------------------------------------------------------------------------- path kinds
def directory_problem(path: Path) -> str | None:
    """Why no directory can be used or created at ``path`` (``None``: it can). Creates nothing: the
    nearest existing ancestor is checked, and a writable one is probed with a temporary directory."""
    path = path.expanduser()
    if path.exists() and not path.is_dir():
        return f"{path} exists and is not a directory"
    existing = path if path.exists() else next((a for a in path.absolute().parents if a.exists()), None)
    if existing is None:  # pragma: no cover - "/" always exists
        return f"no parent of {path} exists"
    if not existing.is_dir():
        return f"{existing} is a file, so no directory can be created under it"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".reharness-probe-", dir=existing))
    except OSError as exc:
        return f"cannot create directories in {existing} ({exc.strerror or exc})"
    return None


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file (``None``: it can)."""
    path = path.expanduser()
    if not path.exists():
        return f"{path} does not exist"
    if path.is_dir():
        return f"{path} is a directory, not a file"
    if not os.access(path, os.R_OK):
        return f"{path} is not readable"
    return None


def output_dir(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback of an output-directory option: it must exist as a directory or be creatable."""
    if value is not None and not ctx.resilient_parsing:
        problem = directory_problem(value)
        if problem:
            raise typer.BadParameter(f"{problem}. Pass a directory that exists or can be created.")
    return value


def input_file(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """Typer callback of an input-file option (one path, a list of paths or ``None``): each must be a
    readable file."""
    if value is not None and not ctx.resilient_parsing:
        for path in value if isinstance(value, list | tuple) else [value]:
            problem = file_problem(path)
            if problem:
                raise typer.BadParameter(f"{problem}. Pass an existing, readable file.")
    return value


def run_dir(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback of a run-directory argument: a directory holding ``run.json``."""
    if value is not None and not ctx.resilient_parsing:
        fix = "Pass OUT/RUN_ID, the 'out' that `reharness run` printed."
        if not value.exists():
            raise typer.BadParameter(f"{value} is not a run directory: it does not exist. {fix}")
        if not value.is_dir():
            raise typer.BadParameter(f"{value} is not a run directory: it is a file. {fix}")
        if not (value / "run.json").is_file():
            raise typer.BadParameter(f"{value} is not a run directory (no run.json). {fix}")
    return value


#: ``--retry-errors`` of the commands that resume runs (``run``, ``improve``).
RetryErrors = Annotated[
    bool,
    typer.Option(
        "--retry-errors",
        help="On resume, run again the episodes that ended in an infrastructure error "
        "(model server or environment failed).",
    ),
]
#: ``--device`` of the commands that build a target model (``run``, ``improve``).
Device = Annotated[
    str | None,
    typer.Option(
        help="Where an in-process model (hf:, tiny:, pretrained:) runs: cpu (default), cuda, cuda:N or mps."
    ),
]
#: ``--gguf-file`` of the commands that build a target model (``run``, ``improve``).
GgufFile = Annotated[
    str | None,
    typer.Option(help="With --agent hf:DIR: the GGUF file inside DIR to load (when DIR holds several)."),
]

#: ``--harness`` of the commands that start from a harness H0 (``improve``, ``pool build``, ``pool evolve``).
StartHarness = Annotated[
    Path | None,
    typer.Option(
        "--harness",
        callback=input_file,
        help="Harness YAML to start from as H0 (fields override the env's base harness; e.g. a reply budget "
        "and step limit for a slow model). Default: the env's base harness.",
    ),
]


def agent_options(agent: str, device: str | None, gguf_file: str | None) -> dict[str, str]:
    """``--device`` / ``--gguf-file`` as the backend's options, checked before anything runs."""
    from reharness.models.registry import backend_options

    return backend_options(agent, device=device, gguf_file=gguf_file)


#: The run-directory argument of ``show`` and ``packet``.
RunDir = Annotated[
    Path,
    typer.Argument(
        callback=run_dir, metavar="RUN_DIR", help="A run directory (OUT/RUN_ID) written by `reharness run`."
    ),
]


#: ``--packet-views`` of ``train engineer`` and ``experiment r1``: SFT prompts per repair-program target.
PacketViews = Annotated[
    int,
    typer.Option(
        min=1, max=8, help="SFT: prompts per program target (the packet's traces in rotated orders)."
    ),
]

#: ``--batch-concurrency`` of ``train engineer`` and ``experiment r1``.
BatchConcurrency = Annotated[
    int,
    typer.Option(
        min=1,
        max=16,
        help="Batches collected or evaluated at once (their episodes share the target's model calls).",
    ),
]
