"""Read-only views of runtime state for hooks (``ctx``).

Harness-R1 hands hooks a read-only deep copy that supports both ``ctx["x"]`` and ``ctx.x``. A hook can
therefore not change runtime state by mutating ``ctx``; only returned effects act.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class ReadOnlyView(Mapping[str, Any]):
    """An immutable mapping with attribute access; nested dicts become views, lists become tuples.

    Freezing is lazy (on access), so building a ``ctx`` costs O(1) however large the state is; the runtime
    hands each hook call freshly built data, so the view never observes later changes.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getitem__(self, key: str) -> Any:
        return freeze(self._data[key])

    def __getattr__(self, key: str) -> Any:
        try:
            return freeze(self._data[key])
        except KeyError:
            raise AttributeError(key) from None

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __setattr__(self, key: str, value: Any) -> None:
        raise TypeError("ctx is read-only: return an effect instead of changing it")

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ReadOnlyView({self._data!r})"


def freeze(value: Any) -> Any:
    """Deep-freeze JSON-like data."""
    if isinstance(value, Mapping):
        return ReadOnlyView(value)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`freeze` (views → dicts, tuples → lists), for serialisation."""
    if isinstance(value, ReadOnlyView):
        value = value._data
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value
