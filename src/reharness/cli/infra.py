"""What the CLI says about infrastructure errors: episodes the model server or the environment ended.

Such episodes are not agent failures, so every summary counts them apart (``policy_errors``,
``env_errors``), says how to run them again (``--retry-errors``), and a batch in which no model request got
a valid reply at all — the server was down, refused the key or kept failing — is a failed command
(:meth:`reharness.runtime.executor.BatchResult.require_replies`: exit status 3).
"""

from __future__ import annotations

from reharness.cli.common import stderr


def note_errors(
    policy_errors: int,
    env_errors: int,
    *,
    retried: int,
    retry_flag: bool,
    example: str | None,
    where: str = "",
) -> None:
    """Tell stderr how many episodes ended in infrastructure errors and how to rerun them."""
    if retried:
        stderr.print(f"retried {retried} episodes that had ended in an infrastructure error", highlight=False)
    total = policy_errors + env_errors
    if not total:
        return
    line = (
        f"note: {total} episode{'s' if total != 1 else ''}{where} ended in an infrastructure error, "
        "not an agent failure "
        f"({policy_errors} policy errors, {env_errors} env errors)"
    )
    if example:
        line += f"; first: {example}"
    stderr.print(line, highlight=False, markup=False, soft_wrap=True)
    if not retry_flag:
        stderr.print(
            "  to run them again: rerun the same command with --retry-errors", highlight=False, markup=False
        )
