"""A persistent, confined Python interpreter for untrusted agent code (the worker side).

Started like the patch hook worker (``python -I -S -B interp_worker.py RFD WFD PPID MAX_FRAME``, empty
environment, stdio on ``/dev/null``, its own process group) and confined by the same layers
(``confine.py``: rlimits → no_new_privs → Landlock → seccomp) through :mod:`workerlib`. Standard library
only; it never imports ``reharness``.

Protocol (frames as in the hook worker):

1. ``config`` → pre-import the allowed modules, confine, answer ``hello`` with the layers achieved;
2. ``exec`` {id, code} → run ``code`` in ONE namespace kept for the worker's life (variables persist between
   steps, like a notebook), with stdout/stderr captured; a final bare expression is echoed like a REPL;
3. while it runs, every call through the proxy object (``config["proxy"]``, e.g. ``apis.notes.login(...)``)
   is sent to the host as ``call`` {app, api, args} and blocks until the host's ``reply`` {ok, result |
   status, message}; an error reply raises ``ApiError`` (with ``status_code``) inside the agent's code;
4. the answer is ``done`` {id, ok, stdout, error}.

Everything the parent needs for safety (the deadline, SIGKILL, respawn, validation of frames) happens in the
parent (:mod:`reharness.core.sandbox.interpreter`); nothing here is trusted by it.
"""

from __future__ import annotations

import ast
import importlib.util
import linecache
import os
import sys
import traceback
from typing import Any


def _load_workerlib() -> Any:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workerlib.py")
    spec = importlib.util.spec_from_file_location("_reharness_workerlib", path)
    if spec is None or spec.loader is None:
        os._exit(71)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ApiError(Exception):
    """An HTTP-like error answered by an app API (``status_code``: 401, 404, 422, ...)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"Response status code is {status_code}:\n{message}")
        self.status_code = status_code


def _make_proxy(name: str, call: Any) -> Any:
    """The ``apis`` object: ``proxy.<app>.<api>(**kwargs)`` sends one call to the host."""

    class Api:
        __slots__ = ("_app", "_api")

        def __init__(self, app: str, api: str) -> None:
            self._app, self._api = app, api

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if args:
                raise TypeError(f"{name}.{self._app}.{self._api}() takes keyword arguments only")
            return call(self._app, self._api, kwargs)

        def __repr__(self) -> str:
            return f"<api {name}.{self._app}.{self._api}>"

    class App:
        __slots__ = ("_app",)

        def __init__(self, app: str) -> None:
            self._app = app

        def __getattr__(self, api: str) -> Api:
            if api.startswith("__"):
                raise AttributeError(api)
            return Api(self._app, api)

        def __repr__(self) -> str:
            return f"<app {name}.{self._app}>"

    class Apis:
        __slots__ = ()

        def __getattr__(self, app: str) -> App:
            if app.startswith("__"):
                raise AttributeError(app)
            return App(app)

        def __repr__(self) -> str:
            return f"<{name}: use {name}.api_docs.show_app_descriptions()>"

    return Apis()


def serve(rfd: int, wfd: int, ppid: int, max_frame: int) -> None:
    lib = _load_workerlib()
    confine, pdeathsig = lib.load_confine(ppid)
    encode, decode = lib.make_codec()
    recv, send = lib.frame_channel(rfd, wfd, max_frame, decode)
    describe, capture, exit_ = lib.error_info, lib.Capture, os._exit
    stdout0, stderr0 = sys.stdout, sys.stderr
    parse, module_node, expression_node = ast.parse, ast.Module, ast.Expression

    config = recv()
    if not isinstance(config, dict) or config.get("op") != "config":
        exit_(lib.EXIT_BAD_CONFIG)
    modules = frozenset(config["modules"])
    missing = []
    for module in sorted(modules):
        try:
            __import__(module)
        except BaseException:
            missing.append(module)
    stdout_cap, tb_cap = int(config["stdout_cap"]), int(config["tb_cap"])
    proxy_name = str(config.get("proxy") or "apis")

    caps = confine.confine(config["confine"])
    caps |= {"pdeathsig": pdeathsig, "pid": os.getpid(), "missing_modules": missing}
    caps["python"] = lib.python_version()
    send(encode({"op": "hello", "caps": caps}))

    def call(app: str, api: str, kwargs: dict[str, Any]) -> Any:
        try:
            frame = encode({"op": "call", "app": str(app), "api": str(api), "args": kwargs})
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"arguments of {app}.{api} must be JSON data (str, int, float, ...): {exc}"
            ) from None
        send(frame)
        reply = recv()
        if not isinstance(reply, dict) or reply.get("op") != "reply":
            exit_(lib.EXIT_BAD_FRAME)
        if reply.get("ok") is True:
            return reply.get("result")
        raise ApiError(int(reply.get("status") or 500), str(reply.get("message") or ""))

    namespace: dict[str, Any] = {
        "__builtins__": lib.safe_builtins(config["builtins"], modules, "agent code"),
        "__name__": "__main__",
        proxy_name: _make_proxy(proxy_name, call),
        "ApiError": ApiError,
    }

    format_list, format_only, extract_tb = (
        traceback.format_list,
        traceback.format_exception_only,
        traceback.extract_tb,
    )

    def describe_agent(exc: BaseException) -> dict[str, str]:
        """Like ``error_info``, but the traceback shows only the agent's own lines (no worker internals)."""
        info = describe(exc, tb_cap, skip=0)
        if info["kind"] == "memory":
            return info
        try:
            mine = [f for f in extract_tb(exc.__traceback__) if f.filename == "<agent>"]
            text = "".join(format_only(type(exc), exc))
            if mine:
                text = "Traceback (most recent call last):\n" + "".join(format_list(mine)) + text
            info["tb"] = text if len(text) <= tb_cap else "…" + text[-tb_cap:]
        except BaseException:
            pass
        return info

    def run(code: str) -> None:
        linecache.cache["<agent>"] = (len(code), None, code.splitlines(True), "<agent>")
        tree = parse(code, "<agent>", "exec")
        last = tree.body[-1] if tree.body and type(tree.body[-1]) is ast.Expr else None
        body = tree.body[:-1] if last is not None else tree.body
        exec(compile(module_node(body=body, type_ignores=[]), "<agent>", "exec"), namespace)
        if last is not None:
            value = eval(compile(expression_node(body=last.value), "<agent>", "eval"), namespace)
            if value is not None:
                print(repr(value))

    while True:
        msg = recv()
        if not isinstance(msg, dict) or msg.get("op") != "exec" or not isinstance(msg.get("code"), str):
            exit_(lib.EXIT_BAD_FRAME)
        sink = capture(stdout_cap)
        sys.stdout = sys.stderr = sink
        error = None
        try:
            run(msg["code"])
        except BaseException as exc:  # everything agent code raises is reported, nothing escapes
            error = describe_agent(exc)
        finally:
            sys.stdout, sys.stderr = stdout0, stderr0
        out = sink.text()
        if sink.dropped:
            out += f"\n[output truncated: {sink.dropped} more characters]"
        try:
            reply = encode(
                {"op": "done", "id": msg.get("id"), "ok": error is None, "stdout": out, "error": error}
            )
        except BaseException:
            reply = encode({"op": "done", "id": msg.get("id"), "ok": False, "stdout": "", "error": None})
        del sink, out
        send(reply)


def main() -> None:
    if len(sys.argv) != 5:
        os._exit(71)
    serve(*(int(arg) for arg in sys.argv[1:5]))


if __name__ == "__main__":
    main()
