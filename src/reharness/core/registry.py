"""One small registry mechanism: named entries, registration by decorator, lookup with did-you-mean errors.

The places that map a user-facing name to an implementation (router strategies; more move here as they are
touched) share it, so every "unknown X" error reads the same and lists the close matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from reharness.core.errors import UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Names → entries of one kind (``kind`` names it in errors: "routing strategy")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""
        return lambda entry: self.add(name, entry)

    def get(self, name: str) -> T:
        """The entry called ``name``; an unknown name is an :class:`UnknownNameError` with close matches."""
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}", hint=did_you_mean(name, list(self._entries))
            ) from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)
