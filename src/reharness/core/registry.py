"""One small registry mechanism: named entries, registration by decorator, lookup with did-you-mean errors.

Every place that maps a user-facing name to an implementation uses it (router strategies, engineers, repair
operators, Harness-R1 benchmarks, the kits registered in a process), so every "unknown X" error reads the
same — ``unknown KIND 'NAME'`` with the close matches as the hint — and help texts list the same names the
lookup accepts (:meth:`Registry.describe`).

Besides plain names a registry knows:

- **aliases**: other spellings of a name (``self_refine`` for ``self-refine``); listed nowhere, accepted;
- **prefix names** (``prefix=True``): ``llm:`` takes an argument (``llm:openai:gpt-4o@URL``);
  :meth:`Registry.resolve` returns the entry and the argument. ``metavar`` is how listings show it
  (``llm:BACKEND``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from reharness.core.errors import UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Names → entries of one kind (``kind`` names it in errors: "routing strategy").

    ``hint`` is added to every unknown-name hint (how to name something the registry does not list)."""

    def __init__(self, kind: str, *, hint: str = "") -> None:
        self.kind = kind
        self.hint = hint
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._metavars: dict[str, str] = {}
        self._prefixes: list[str] = []  # longest first: the most specific prefix wins

    # ------------------------------------------------------------------------------------------ registration
    def add(
        self,
        name: str,
        entry: T,
        *,
        aliases: Iterable[str] = (),
        metavar: str | None = None,
        prefix: bool = False,
        replace: bool = False,
    ) -> T:
        """Register ``entry`` as ``name`` (``prefix``: ``name`` followed by an argument names it).

        A name (or alias) registered twice is an error unless ``replace`` (a re-registration in a process)."""
        aliases = tuple(aliases)
        for key in (name, *aliases):
            if not replace and (key in self._entries or key in self._aliases):
                raise ValueError(f"{self.kind} {key!r} is registered twice")
        self._entries[name] = entry
        self._aliases.update(dict.fromkeys(aliases, name))
        if metavar:
            self._metavars[name] = metavar
        if prefix and name not in self._prefixes:
            self._prefixes = sorted([*self._prefixes, name], key=len, reverse=True)
        return entry

    def register(
        self, name: str, *, aliases: Iterable[str] = (), metavar: str | None = None, prefix: bool = False
    ) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""
        return lambda entry: self.add(name, entry, aliases=aliases, metavar=metavar, prefix=prefix)

    # ------------------------------------------------------------------------------------------ lookup
    def lookup(self, name: str) -> tuple[str, T, str] | None:
        """``(registered name, entry, argument)`` of ``name``, or ``None``; the argument is what follows a
        prefix name (``""`` for a plain name). An exact name wins over a prefix, which needs an argument."""
        key = self._aliases.get(name, name)
        if key in self._entries and key not in self._prefixes:
            return key, self._entries[key], ""
        for prefix in self._prefixes:
            if name.startswith(prefix) and name[len(prefix) :].strip():
                return prefix, self._entries[prefix], name[len(prefix) :].strip()
        return None

    def resolve(self, name: str) -> tuple[str, T, str]:
        """:meth:`lookup`, or the :class:`UnknownNameError` of :meth:`unknown`."""
        found = self.lookup(name)
        if found is None:
            raise self.unknown(name)
        return found

    def get(self, name: str) -> T:
        """The entry called ``name``; an unknown name is an :class:`UnknownNameError` with close matches."""
        return self.resolve(name)[1]

    def unknown(self, name: str, *, known: Iterable[str] | None = None, hint: str = "") -> UnknownNameError:
        """The error for ``name`` not being known: close matches among ``known`` (default: the registered
        names), then ``hint`` (default: the registry's)."""
        choices = list(dict.fromkeys(self.names() if known is None else known))
        extra = hint or self.hint
        suffix = f"; {extra}" if extra else ""
        return UnknownNameError(f"unknown {self.kind} {name!r}", hint=did_you_mean(name, choices) + suffix)

    # ------------------------------------------------------------------------------------------ listing
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (aliases left out)."""
        return tuple(self._entries)

    def items(self) -> tuple[tuple[str, T], ...]:
        return tuple(self._entries.items())

    def entries(self) -> tuple[T, ...]:
        return tuple(self._entries.values())

    def shown(self) -> tuple[str, ...]:
        """The names as help texts show them (a prefix name by its metavar: ``llm:BACKEND``)."""
        return tuple(self._metavars.get(name, name) for name in self._entries)

    def describe(self, conjunction: str = "or") -> str:
        """``a, b or c``: the names for a help text."""
        shown = self.shown()
        if len(shown) <= 1:
            return "".join(shown)
        return f"{', '.join(shown[:-1])} {conjunction} {shown[-1]}"

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
