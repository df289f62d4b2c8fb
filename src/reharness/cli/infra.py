"""What the CLI says about infrastructure errors: episodes the model server or the environment ended.

Such episodes are not agent failures, so every summary counts them apart (``policy_errors``,
``env_errors``), says how to run them again (``--retry-errors``), and a batch in which no model request got
a valid reply at all — the server was down, refused the key or kept failing — is a failed command: it says so
on stderr and exits with :data:`NO_VALID_REPLY_EXIT`.
"""

from __future__ import annotations

from collections.abc import Sequence

from reharness.cli.common import stderr
from reharness.core.secrets import redact
from reharness.store.records import EpisodeRecord, infrastructure_error

#: Exit status of a command whose model requests all failed (2 is a usage error, 1 a crash).
NO_VALID_REPLY_EXIT = 3


def first_error(episodes: Sequence[EpisodeRecord]) -> str | None:
    """The error of the first episode that ended in an infrastructure error (redacted), if any."""
    found = next((e.error for e in episodes if infrastructure_error(e) is not None and e.error), None)
    return None if found is None else redact(found)[:400]


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


def no_valid_reply(requests: int, example: str | None) -> str:
    """The stderr message of a batch whose ``requests`` model requests all failed."""
    text = f"error: none of the {requests} model requests of this run got a valid reply"
    if example:
        text += f" (first: {example})"
    return (
        text + "\n  how to fix: check that the model server is up and reachable at the agent's URL, that the "
        "API key is valid, then rerun the same command with --retry-errors"
    )
