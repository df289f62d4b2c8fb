"""Helpers shared by the standalone sandbox worker scripts (the patch hook worker, the code interpreter).

Standard library only: every worker loads this file by path (``python -I -S -B``: no ``sys.path`` entry for
the package, and a worker must never import ``reharness``). It holds what every worker needs in the same
form: start-up (death signal, confinement module), the frame channel built from primitives captured before
untrusted code runs, a bounded output sink, the restricted builtins and the JSON description of an error.
"""

from __future__ import annotations

import builtins
import importlib.util
import json
import json.decoder
import json.encoder
import os
import struct
import sys
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

EXIT_PARENT_GONE = 70
EXIT_BAD_CONFIG = 71
EXIT_BAD_FRAME = 72


class Capture:
    """A text sink that keeps the first ``cap`` characters written to it (captured stdout and stderr)."""

    def __init__(self, cap: int) -> None:
        self.parts: list[str] = []
        self.left = cap
        self.dropped = 0

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.left > 0:
            self.parts.append(text[: self.left])
        if len(text) > self.left:
            self.dropped += len(text) - max(self.left, 0)
        self.left -= len(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)


def safe_builtins(names: list[str], modules: frozenset[str], who: str = "hooks") -> dict[str, Any]:
    """A builtins dict: the allowed names plus an ``__import__`` that admits only the allowed modules."""
    real_import = builtins.__import__
    allowed = ", ".join(sorted(modules))

    def restricted_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> ModuleType:
        if level != 0 or name not in modules:
            raise ImportError(f"import of {name!r} is not allowed in {who}; allowed modules: {allowed}")
        return real_import(name, globals, locals, fromlist, 0)

    table = {name: getattr(builtins, name) for name in names if hasattr(builtins, name)}
    table["__import__"] = restricted_import
    return table


def error_info(exc: BaseException, tb_cap: int = 4096, skip: int = 1) -> dict[str, str]:
    """A JSON-able description of ``exc``: kind, type, message (≤ 1 KB) and traceback tail (≤ ``tb_cap``)."""
    if isinstance(exc, MemoryError):  # format nothing: there may be no memory to do it with
        return {"kind": "memory", "type": "MemoryError", "msg": "", "tb": ""}
    try:
        name = str(type(exc).__name__)[:100]
    except BaseException:
        name = "Exception"
    try:
        msg = str(exc)[:1024]
    except BaseException:
        msg = "<unprintable exception>"
    try:
        tb = exc.__traceback__
        for _ in range(skip):  # drop the worker's own frames
            tb = tb.tb_next if tb is not None else None
        text = "".join(traceback.format_exception(type(exc), exc, tb, limit=-12))
    except BaseException:
        text = ""
    if len(text) > tb_cap:
        text = "…" + text[-tb_cap:]
    return {"kind": "runtime", "type": name, "msg": msg, "tb": text}


def make_codec(
    default: Callable[[Any], Any] | None = None,
) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    """JSON encode/decode built from the C primitives, captured once (immune to later monkeypatching)."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    quote = json.encoder.encode_basestring_ascii

    def reject(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    scan_once = getattr(json.decoder.JSONDecoder(parse_constant=reject), "scan_once")  # noqa: B009
    join = "".join
    fallback = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=default)

    def encode(obj: Any) -> str:
        if c_make_encoder is None:  # pragma: no cover - CPython always has _json
            return fallback.encode(obj)
        return join(c_make_encoder({}, default, quote, None, ":", ",", False, False, False)(obj, 0))

    def decode(text: str) -> Any:
        obj, end = scan_once(text, 0)
        if end != len(text):
            raise ValueError("trailing data after the JSON document")
        return obj

    return encode, decode


def load_confine(ppid: int) -> tuple[Any, bool]:
    """Ask for SIGKILL on parent death (first of all) and load ``confine.py``; ``(module, pdeathsig)``."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confine.py")
    spec = importlib.util.spec_from_file_location("_reharness_confine", path)
    if spec is None or spec.loader is None:
        os._exit(EXIT_BAD_CONFIG)
    confine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(confine)
    try:  # before seccomp (which denies PR_SET_PDEATHSIG) and before reading any frame
        pdeathsig = bool(confine.set_pdeathsig(ppid))  # exits with EXIT_PARENT_GONE if the parent died
    except (OSError, AttributeError):  # no libc or no prctl here: EOF on the pipe still ends the worker
        pdeathsig = False
        if os.getppid() != ppid:
            os._exit(EXIT_PARENT_GONE)
    return confine, pdeathsig


def frame_channel(
    rfd: int, wfd: int, max_frame: int, decode: Callable[[str], Any]
) -> tuple[Callable[[], Any], Callable[[str], None]]:
    """``(recv, send)`` over the worker's pipes, built from primitives captured now (before any untrusted
    code runs). ``recv`` exits the worker on EOF (status 0) and on an oversized or invalid frame (72)."""
    read, write, exit_ = os.read, os.write, os._exit
    header = struct.Struct("<I")
    pack, unpack = header.pack, header.unpack

    def recv() -> Any:
        head = b""
        while len(head) < 4:
            more = read(rfd, 4 - len(head))
            if not more:
                exit_(0)  # EOF: the parent closed the pipe or died
            head += more
        (size,) = unpack(head)
        if size > max_frame:
            exit_(EXIT_BAD_FRAME)
        chunks, got = [], 0
        while got < size:
            chunk = read(rfd, min(size - got, 1 << 20))
            if not chunk:
                exit_(0)
            chunks.append(chunk)
            got += len(chunk)
        try:
            return decode(b"".join(chunks).decode("ascii"))
        except BaseException:
            exit_(EXIT_BAD_FRAME)

    def send(text: str) -> None:
        body = text.encode()
        data = memoryview(pack(len(body)) + body)
        while data:
            data = data[write(wfd, data) :]

    return recv, send


def python_version() -> str:
    return sys.version.split()[0]
