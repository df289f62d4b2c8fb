"""Typed errors with stable codes.

Every user-facing error names what was wrong and how to fix it. The ``code`` strings are stable and shared
with the failure taxonomy, so they can be matched by scripts and stored in trajectories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class ReharnessError(Exception):
    """Base class of all reharness errors: ``code`` is stable, ``hint`` says how to fix it."""

    code = "error"

    def __init__(self, message: str, *, hint: str | None = None, code: str | None = None) -> None:
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f"\n  how to fix: {self.hint}"
        return text

    def __reduce__(self) -> Any:
        """Pickling (an error raised in a Ray actor, read on the driver) keeps message, hint and code."""
        return (_rebuild, (type(self), self.message, self.hint, self.code), self.__dict__)


def _rebuild(cls: type[ReharnessError], message: str, hint: str | None, code: str) -> ReharnessError:
    error = cls.__new__(cls)
    ReharnessError.__init__(error, message, hint=hint, code=code)
    return error


class ConfigError(ReharnessError):
    """A configuration file, option or argument is invalid."""

    code = "config_error"


class DataError(ReharnessError):
    """A data file (task file, trajectory file) is missing or malformed."""

    code = "data_error"


class EnvError(ReharnessError):
    """An environment was used in a way its contract does not allow."""

    code = "env_error"


class UnknownNameError(ReharnessError):
    """A name (environment, agent, split) is not known; the message lists close matches."""

    code = "unknown_name"


class StoreError(ReharnessError):
    """The trajectory store is inconsistent with the run being resumed."""

    code = "store_error"


class NoValidReplyError(ReharnessError):
    """No model request of a batch got a valid reply (server down, key refused, every retry failed)."""

    code = "no_valid_reply"
    exit_code = 3  # the CLI's status for it, as `reharness run` uses (2 is a usage error)


def did_you_mean(name: str, choices: list[str]) -> str:
    """Return a 'did you mean' suffix listing the closest of ``choices`` (or all of them)."""
    import difflib

    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    if close:
        return f"did you mean {', '.join(repr(c) for c in close)}? (known: {', '.join(choices)})"
    return f"known: {', '.join(choices)}"


def options_error(exc: ValidationError, command: str) -> ConfigError:
    """A :class:`ConfigError` naming the first invalid command-line option of a pydantic ``ValidationError``
    (``--batch-size: Input should be greater than 0``), with ``command --help`` as the hint."""
    err = exc.errors()[0]
    name = "--" + str(err["loc"][0]).replace("_", "-") if err["loc"] else "options"
    return ConfigError(f"{name}: {err['msg']}", hint=f"see `{command} --help`")
