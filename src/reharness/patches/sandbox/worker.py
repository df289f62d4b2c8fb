"""The sandbox worker: a standalone script that runs one patch version's hooks for its parent (L2).

Started by the supervisor as ``python -I -S -B worker.py RFD WFD PPID MAX_FRAME`` (``-P -s`` instead of
``-I`` when a fixed hash seed is wanted) with an empty environment, stdio on ``/dev/null`` and the protocol
on two inherited pipes. It imports only the standard library — never ``reharness`` — so nothing of the
host's code or configuration is reachable from patch code. Start-up (REFERENCE.md §6 §5.2):

1. ask for SIGKILL on parent death (``pdeathsig: false`` in ``hello`` where prctl is unavailable) and exit
   if the parent is already gone (it died between fork and prctl);
2. read the ``config`` frame, pre-import the allowed modules, capture the protocol's own functions
   (JSON encoder/scanner, ``struct``, ``os.read/write/_exit``) as locals *before* any patch code runs, so a
   patch that monkeypatches ``json.dumps`` or ``struct.pack`` cannot corrupt the channel;
3. confine itself (``reharness/core/sandbox/confine.py``: rlimits → no_new_privs → Landlock → seccomp) and
   send ``hello`` with the layers achieved; the parent decides whether that is good enough (``strict``)
   before sending any code;
4. on ``load``, compile each hook into a fresh namespace whose ``__builtins__`` is the safe dict (with an
   ``__import__`` that admits only the allowed modules) and answer ``loaded``;
5. serve ``call`` frames until EOF: ``ctx`` is a read-only view, ``nb`` a plain dict that goes back to the
   parent, stdout/stderr are captured into a bounded buffer, exceptions become typed error frames.

The ``r1`` dialect (``config["dialect"]``) changes only what a hook sees: ``ctx`` is Harness-R1's dict
subclass with attribute reads (:class:`R1Ctx`), ``re``/``math``/``SequenceMatcher`` are pre-injected and a
line budget (``config["line_budget"]``) aborts long hooks as Harness-R1's tracer does. Confinement, the
protocol and the parent's checks are the same for both dialects.

Frames are a 4-byte little-endian length plus ASCII JSON. The parent enforces every deadline and cap; the
checks here only make failures cheaper and clearer. The helpers are reused by the in-process mode.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any


def _sibling(name: str) -> Any:
    """A module next to this file, loaded by path (the worker runs with ``-I``: its directory is not on
    ``sys.path``; and it must never import the ``reharness`` package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_reharness_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shared(name: str) -> Any:
    """A worker helper module of ``reharness/core/sandbox``, loaded by path like :func:`_sibling`."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, os.pardir, "core", "sandbox", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_reharness_{name}", os.path.normpath(path))
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The ``r1`` dialect's view, namespace and line budget (:mod:`.r1_dialect`).
r1 = _sibling("r1_dialect")
EXIT_PARENT_GONE = 70
EXIT_BAD_CONFIG = 71
EXIT_BAD_FRAME = 72
HookFn = Callable[[Any, dict[str, Any]], Any]


class CtxView(Mapping[str, Any]):
    """Read-only ``ctx``: ``ctx["x"]`` and ``ctx.x``; nested dicts are views, lists are tuples (lazily)."""

    __slots__ = ("_d",)

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_d", data)

    def __getitem__(self, key: str) -> Any:
        return freeze(self._d[key])

    def __getattr__(self, key: str) -> Any:
        try:
            return freeze(self._d[key])
        except KeyError:
            raise AttributeError(f"ctx has no field {key!r}") from None

    def get(self, key: str, default: Any = None) -> Any:
        return freeze(self._d[key]) if key in self._d else default

    def __setattr__(self, key: str, value: Any) -> None:
        raise TypeError("ctx is read-only: return an effect instead of changing it")

    def __delattr__(self, key: str) -> None:
        raise TypeError("ctx is read-only")

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return f"ctx({self._d!r})"


def freeze(value: Any) -> Any:
    if type(value) is dict:
        return CtxView(value)
    if type(value) is list:
        return tuple(freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """JSON ``default``: a view returned by a hook is sent as the dict it wraps."""
    if isinstance(value, CtxView):
        return object.__getattribute__(value, "_d")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: Worker-side helpers shared with other confined workers (``reharness/core/sandbox/workerlib.py``).
_lib = _shared("workerlib")
Capture, safe_builtins, error_info = _lib.Capture, _lib.safe_builtins, _lib.error_info


def load_hooks(
    sources: dict[str, str],
    builtin_names: list[str],
    modules: frozenset[str],
    tb_cap: int = 4096,
    dialect: str = "reharness",
) -> tuple[dict[str, HookFn], dict[str, dict[str, str]]]:
    """Compile each hook source into its own namespace; returns the ``hook`` callables and load errors.

    In the ``r1`` dialect every namespace also holds Harness-R1's pre-injected ``re``, ``math`` and
    ``SequenceMatcher`` (each code block still gets its own namespace, as there).
    """
    base = safe_builtins(builtin_names, modules)
    injected = r1.r1_globals() if dialect == "r1" else {}
    hooks: dict[str, HookFn] = {}
    errors: dict[str, dict[str, str]] = {}
    for point, src in sources.items():
        blocks = r1.split_blocks(src) if dialect == "r1" else [src]
        if len(blocks) > 1:  # a hook repeated in a Harness-R1 patch: each block on its own, all in order
            parts = {f"{point}#{i}": b for i, b in enumerate(blocks)}
            loaded, _ = load_hooks(
                parts, builtin_names, modules, tb_cap, dialect
            )  # a failing block is dropped
            hooks[point] = list(loaded.values())  # type: ignore[assignment]
            continue
        filename = f"<patch:{point}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        namespace: dict[str, Any] = {"__builtins__": dict(base), "__name__": f"patch_{point}", **injected}
        try:
            exec(compile(src, filename, "exec", dont_inherit=True), namespace)
            fn = namespace.get("hook")
            if not callable(fn):
                raise TypeError("the hook code defines no function hook(ctx, nb)")
            hooks[point] = fn
        except BaseException as exc:  # a broken hook is reported per point, the others still load
            errors[point] = error_info(exc, tb_cap, skip=0)
    return hooks, errors


def call_hook(
    fn: HookFn, ctx: Any, nb: dict[str, Any], stdout_cap: int, line_budget: int | None = None
) -> tuple[bool, Any, str]:
    """Run one hook with stdout/stderr captured; ``(True, value, out)`` or ``(False, error_info, out)``."""
    sink = Capture(stdout_cap)
    saved = sys.stdout, sys.stderr
    previous = sys.gettrace()
    sys.stdout = sys.stderr = sink  # type: ignore[assignment]
    try:
        if line_budget is not None:
            sys.settrace(r1.line_tracer(line_budget))
        value = fn(ctx, nb)
    except BaseException as exc:  # everything a hook raises is reported, nothing escapes
        return False, error_info(exc, skip=1), sink.text()
    finally:
        if line_budget is not None:
            sys.settrace(previous)
        sys.stdout, sys.stderr = saved
    return True, value, sink.text()


def make_codec() -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    """JSON encode/decode from the C primitives, captured once; views returned by hooks encode as dicts."""
    return _lib.make_codec(_thaw)  # type: ignore[no-any-return]


def serve(rfd: int, wfd: int, ppid: int, max_frame: int) -> None:
    """Run the worker: confine, report, load, then answer calls until EOF on the command pipe."""
    try:
        confine = _shared("confine")
    except (ImportError, OSError):
        os._exit(EXIT_BAD_CONFIG)
    try:  # first of all, before seccomp (which denies PR_SET_PDEATHSIG) and before reading any frame
        pdeathsig = confine.set_pdeathsig(ppid)  # exits with EXIT_PARENT_GONE if the parent already died
    except (OSError, AttributeError):  # no libc or no prctl here: fail soft, EOF on the pipe still ends us
        pdeathsig = False
        if os.getppid() != ppid:
            os._exit(EXIT_PARENT_GONE)

    exit_ = os._exit
    run_hook, view, describe = call_hook, CtxView, error_info  # locals: patch code cannot swap them
    encode, decode = make_codec()
    stdout0, stderr0 = sys.stdout, sys.stderr
    recv, send = _lib.frame_channel(rfd, wfd, max_frame, decode)  # built before any patch code runs

    config = recv()
    if not isinstance(config, dict) or config.get("op") != "config":
        exit_(EXIT_BAD_CONFIG)
    modules = frozenset(config["modules"])
    missing = []
    for name in sorted(modules):
        try:
            __import__(name)
        except BaseException:
            missing.append(name)
    stdout_cap, tb_cap = int(config["stdout_cap"]), int(config["tb_cap"])
    dialect = str(config.get("dialect", "reharness"))
    line_budget = config.get("line_budget")
    if dialect == "r1":
        view = r1.r1_view
        r1.r1_globals()  # import re, math and difflib before confinement

    caps = confine.confine(config["confine"])
    caps |= {"pdeathsig": pdeathsig, "pid": os.getpid(), "missing_modules": missing}
    caps["python"] = sys.version.split()[0]
    send(encode({"op": "hello", "caps": caps}))

    load = recv()
    if not isinstance(load, dict) or load.get("op") != "load":
        exit_(EXIT_BAD_CONFIG)
    hooks, load_errors = load_hooks(load["hooks"], config["builtins"], modules, tb_cap, dialect)
    sys.stdout, sys.stderr = stdout0, stderr0
    send(encode({"op": "loaded", "errors": load_errors}))

    while True:
        msg = recv()
        call_id = msg.get("id") if isinstance(msg, dict) else None
        try:
            fn = hooks.get(msg["hook"])
            if fn is None:
                error = load_errors.get(msg["hook"]) or {
                    "kind": "unknown_hook",
                    "type": "KeyError",
                    "msg": "",
                }
                send(encode({"id": call_id, "ok": False, "error": error, "stdout": ""}))
                continue
            if type(fn) is list:
                ok, value, out = r1.run_blocks(
                    run_hook, fn, view, msg["ctx"], msg["nb"], stdout_cap, line_budget
                )
            else:
                ok, value, out = run_hook(fn, view(msg["ctx"]), msg["nb"], stdout_cap, line_budget)
            sys.stdout, sys.stderr = stdout0, stderr0
            if ok:
                try:
                    reply = encode(
                        {"id": call_id, "ok": True, "result": value, "nb": msg["nb"], "stdout": out}
                    )
                except BaseException as exc:
                    info = describe(exc, tb_cap, skip=0)
                    if info["kind"] != "memory":
                        info |= {"kind": "result", "tb": ""}
                    reply = encode({"id": call_id, "ok": False, "error": info, "stdout": out})
                if len(reply) > max_frame:
                    too_big = f"the reply is {len(reply)} bytes; the frame cap is {max_frame}"
                    info = {"kind": "result", "type": "OverflowError", "msg": too_big, "tb": ""}
                    reply = encode({"id": call_id, "ok": False, "error": info, "stdout": out[:256]})
            else:
                failed = {"id": call_id, "ok": False, "error": value, "stdout": out}
                try:  # Harness-R1 keeps the notebook writes a failing hook made before it failed
                    reply = encode(failed | {"nb": msg["nb"]}) if dialect == "r1" else encode(failed)
                except BaseException:
                    reply = encode(failed)
            del value, msg
        except MemoryError:
            info = {"kind": "memory", "type": "MemoryError", "msg": "", "tb": ""}
            reply = encode({"id": call_id, "ok": False, "error": info, "stdout": ""})
        send(reply)


def main() -> None:
    if len(sys.argv) != 5:
        os._exit(EXIT_BAD_CONFIG)
    serve(*(int(arg) for arg in sys.argv[1:5]))


if __name__ == "__main__":
    main()
