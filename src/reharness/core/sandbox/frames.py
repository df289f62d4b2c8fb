"""Parent-side framing and strict decoding of what a sandbox worker sends back (part of L5).

A frame is a 4-byte little-endian length followed by that many bytes of ASCII JSON. The worker is untrusted,
so everything it sends is checked before the host uses it:

- the header is checked against the frame cap *before* the body is read (:class:`FrameReader`);
- decoding is strict — NaN/Infinity rejected through ``parse_constant``, and the ``RecursionError``,
  ``ValueError`` or ``UnicodeDecodeError`` a hostile document can provoke become :class:`FrameError`;
- :func:`check_value` walks the decoded value iteratively (no recursion a deep value could exhaust) and
  enforces depth, total characters, total items, and that strings carry no control characters or lone
  surrogates (which would break logs, terminals and UTF-8 trajectory files).

Hand-written because it is small and the stdlib ``json`` plus ``struct`` are all it needs; orjson would be
faster but is an optional dependency and accepts nesting that the stdlib refuses.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

HEADER = struct.Struct("<I")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class FrameError(ValueError):
    """A frame from the worker is malformed, too large, or its content breaks a limit."""


def _reject_constant(name: str) -> Any:
    raise FrameError(f"non-standard JSON constant {name} (NaN/Infinity are not allowed)")


_scan = getattr(json.JSONDecoder(parse_constant=_reject_constant), "scan_once")  # noqa: B009 - untyped attr


def _to_json(value: Any) -> Any:
    """``default`` for host data: mappings (read-only views) as dicts, sets and tuples as lists."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"ctx/nb contain a value of type {type(value).__name__}, which is not JSON data")


_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_to_json)


def encode(obj: Any) -> bytes:
    """Header plus compact ASCII JSON; raises ``TypeError``/``ValueError`` for non-JSON host data."""
    body = _encoder.encode(obj).encode("ascii")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> Any:
    """Strictly decode one frame body."""
    try:
        text = body.decode("ascii")
        value, end = _scan(text, 0)
    except FrameError:
        raise
    except RecursionError:
        raise FrameError("the frame is nested too deeply to decode") from None
    except (ValueError, StopIteration) as exc:  # JSONDecodeError, UnicodeDecodeError, int-digit limit
        raise FrameError(f"the frame is not valid JSON: {str(exc)[:200]}") from None
    if end != len(text):
        raise FrameError("the frame has trailing data after its JSON document")
    return value


class FrameReader:
    """Accumulates bytes from the worker and cuts them into frames, refusing oversized headers at once."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next_frame(self) -> bytes | None:
        """The next complete body, or ``None``; raises :class:`FrameError` as soon as a header is too big."""
        if len(self._buf) < HEADER.size:
            return None
        (size,) = HEADER.unpack_from(self._buf)
        if size > self.max_frame:
            raise FrameError(f"the worker announced a {size}-byte frame; the cap is {self.max_frame} bytes")
        end = HEADER.size + size
        if len(self._buf) < end:
            return None
        body = bytes(self._buf[HEADER.size : end])
        del self._buf[:end]
        return body

    @property
    def pending(self) -> int:
        return len(self._buf)


def check_value(
    value: Any,
    what: str,
    max_depth: int,
    max_chars: int | None = None,
    max_items: int | None = None,
    clean_text: bool = False,
) -> None:
    """Validate decoded JSON iteratively: depth, total characters, total items, clean strings."""
    chars = items = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    push: Callable[[tuple[Any, int]], None] = stack.append
    while stack:
        node, depth = stack.pop()
        kind = type(node)
        if kind is str:
            chars += len(node)
            if clean_text and _CONTROL.search(node):
                raise FrameError(f"{what} contains control characters or lone surrogates")
            continue
        if kind is dict or kind is list:
            if depth > max_depth:
                raise FrameError(f"{what} is nested deeper than {max_depth} levels")
            items += len(node)
            if max_items is not None and items > max_items:
                raise FrameError(f"{what} has more than {max_items} items")
            if kind is dict:
                for key, child in node.items():
                    chars += len(key)
                    if clean_text and _CONTROL.search(key):
                        raise FrameError(f"{what} contains control characters or lone surrogates")
                    push((child, depth + 1))
            else:
                for child in node:
                    push((child, depth + 1))
        if max_chars is not None and chars > max_chars:
            raise FrameError(f"{what} holds more than {max_chars} characters of text")
    if max_chars is not None and chars > max_chars:
        raise FrameError(f"{what} holds more than {max_chars} characters of text")
