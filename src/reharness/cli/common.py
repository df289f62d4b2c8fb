"""Shared CLI helpers: consoles and turning reharness errors into clear messages and exit codes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from reharness.core.errors import ReharnessError
from reharness.core.secrets import redact

stdout = Console()
stderr = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(fn: F) -> F:
    """Print :class:`ReharnessError` as 'error: …' plus the fix (secrets redacted), and exit with code 2
    (or the error's ``exit_code``; no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ReharnessError as exc:
            stderr.print("error", style="bold red", end="")
            message = redact(exc.message)
            stderr.print(f": [{exc.code}] {message}", highlight=False, markup=False, soft_wrap=True)
            if exc.hint:
                hint = redact(exc.hint)
                stderr.print(f"  how to fix: {hint}", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(getattr(exc, "exit_code", 2)) from None

    return wrapper  # type: ignore[return-value]
