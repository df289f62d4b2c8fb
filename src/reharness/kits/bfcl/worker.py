"""The confined BFCL worker: official backends and ``multi_turn_checker``, away from the host interpreter.

BFCL's official code runs a model's function calls with ``eval`` on strings, against backend instances it
keeps in module globals keyed by model name and entry id. That code runs here, in a worker process started
like reharness's sandbox workers (``python -P -s -S -B worker.py RFD WFD PPID MAX_FRAME``, empty environment,
stdio on ``/dev/null``, its own process group), confined by the same layers (``core/sandbox/confine.py``:
rlimits, no_new_privs, Landlock read-only, seccomp) once the BFCL modules are imported. It never imports
``reharness``; only the directories named in the config frame (where ``bfcl_eval`` and ``mpmath`` live) join
``sys.path``.

Protocol (one JSON frame each way, as in the other workers):

1. ``config`` {paths, confine} → import the backends, confine, answer ``hello`` {caps};
2. ``start`` {entry} → drop every backend instance left in BFCL's globals (no state crosses episodes), keep
   the entry (id, initial_config, involved_classes) → ``ok``;
3. ``exec`` {calls} → ``execute_multi_turn_func_call`` on the current entry → ``results`` {results};
4. ``grade`` {model, ground_truth} → drop the instances, run ``multi_turn_checker`` → ``graded`` {valid,
   error_type, error_message}, then drop the instances again.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

MODEL = "reharness_episode"
BACKENDS = (
    "gorilla_file_system",
    "math_api",
    "message_api",
    "posting_api",
    "ticket_api",
    "trading_bot",
    "travel_booking",
    "vehicle_control",
)


def _load_workerlib() -> Any:
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, os.pardir, "core", "sandbox", "workerlib.py")
    spec = importlib.util.spec_from_file_location("_reharness_workerlib", os.path.normpath(path))
    if spec is None or spec.loader is None:
        os._exit(71)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(value: Any, cap: int = 4000) -> str:
    return str(value)[:cap]


def serve(rfd: int, wfd: int, ppid: int, max_frame: int) -> None:
    lib = _load_workerlib()
    confine, pdeathsig = lib.load_confine(ppid)
    encode, decode = lib.make_codec(default=str)
    recv, send = lib.frame_channel(rfd, wfd, max_frame, decode)
    config = recv()
    if not isinstance(config, dict) or config.get("op") != "config":
        os._exit(lib.EXIT_BAD_CONFIG)
    for path in config.get("paths", []):
        if isinstance(path, str) and path not in sys.path:
            sys.path.append(path)
    error = ""
    try:
        prefix = "bfcl_eval.eval_checker.multi_turn_eval"
        utils = importlib.import_module(f"{prefix}.multi_turn_utils")
        checker = importlib.import_module(f"{prefix}.multi_turn_checker")
        for backend in BACKENDS:
            importlib.import_module(f"{prefix}.func_source_code.{backend}")
    except BaseException as exc:  # reported in hello: the host raises a clear error
        error = f"{type(exc).__name__}: {exc}"
    caps = confine.confine(config["confine"])
    caps |= {"pdeathsig": pdeathsig, "pid": os.getpid(), "import_error": error}
    send(encode({"op": "hello", "caps": caps}))
    if error:
        os._exit(0)
    namespace = utils.__dict__
    entry: dict[str, Any] = {}

    def drop_instances() -> None:
        for name in [n for n in namespace if n.endswith("_instance")]:
            del namespace[name]

    while True:
        msg = recv()
        op = msg.get("op") if isinstance(msg, dict) else None
        try:
            if op == "start":
                drop_instances()
                entry = dict(msg["entry"])
                send(encode({"op": "ok"}))
            elif op == "exec":
                results, _ = utils.execute_multi_turn_func_call(
                    [str(c) for c in msg["calls"]],
                    entry["initial_config"],
                    entry["involved_classes"],
                    MODEL,
                    entry["id"],
                    long_context="long_context" in entry["id"],
                )
                send(encode({"op": "results", "results": [_text(r) for r in results]}))
            elif op == "grade":
                drop_instances()
                verdict = checker.multi_turn_checker(
                    msg["model"], msg["ground_truth"], entry, entry["id"].rsplit("_", 1)[0], MODEL
                )
                drop_instances()
                send(
                    encode(
                        {
                            "op": "graded",
                            "valid": bool(verdict.get("valid")),
                            "error_type": _text(verdict.get("error_type", "")),
                            "error_message": _text(verdict.get("error_message", "")),
                        }
                    )
                )
            else:
                send(encode({"op": "error", "message": f"unknown op {op!r}"}))
        except BaseException as exc:  # noqa: BLE001 - reported to the host, the worker lives on
            send(encode({"op": "error", "message": f"{type(exc).__name__}: {_text(exc, 1000)}"}))


def main() -> None:
    if len(sys.argv) != 5:
        os._exit(71)
    serve(*(int(arg) for arg in sys.argv[1:5]))


if __name__ == "__main__":
    main()
