"""The confined test runner: a standalone script that runs a repository's tests and prints one JSON line.

Started by :mod:`.testrun` as ``python -I -S -B runner.py CONFIG_JSON`` with the repository copy as its
working directory, an empty environment and stdout/stderr on files outside the tree. It imports only the
standard library — never ``reharness`` — and, before importing any repository code:

1. asks for SIGKILL on parent death and confines itself with ``reharness/core/sandbox/confine.py`` (loaded
   by path, the file the parent names in ``confine_path``): rlimits (memory, CPU, open files, file size),
   ``no_new_privs``, Landlock (read-only interpreter and libraries, the repository copy writable, no TCP),
   seccomp (no sockets, fork, exec, signals to others);
2. runs each test id — ``path/to/test_file.py::Class::method`` (``unittest.TestCase``) or
   ``path/to/test_file.py::function`` — or every test of every ``test*.py`` file under ``tests/`` when no id
   is given, each under a wall-clock alarm (``per_test_s``), with its output captured and thrown away;
3. prints ``RESULT <json>``: ``{"caps": …, "results": {id: "passed" | "failed" | "error" | "timeout"},
   "messages": {id: short reason}}``.

The parent takes the last ``RESULT`` line, enforces the overall time limit and kills the process group.
"""

import contextlib
import importlib
import importlib.util
import io
import json
import os
import signal
import sys
import traceback
import unittest
from typing import Any

MESSAGE_CHARS = 600


class TestTimeout(BaseException):
    """Raised by the alarm inside a test that runs past ``per_test_s``."""


def _alarm(signum, frame):
    raise TestTimeout()


def _load_confine(path):
    spec = importlib.util.spec_from_file_location("_reharness_confine", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _short(exc_info, root):
    """The exception line and the innermost frame inside the repository."""
    etype, value, tb = exc_info
    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(root)]
    where = ""
    if frames:
        f = frames[-1]
        where = f" (at {os.path.relpath(f.filename, root)}:{f.lineno}, in {f.name})"
    text = "".join(traceback.format_exception_only(etype, value)).strip()
    return (text + where)[:MESSAGE_CHARS]


def _module_name(path):
    return path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")


def discover(root):
    """Every test id under ``tests/`` (TestCase methods and ``test_*`` functions), sorted by file."""
    ids = []
    base = os.path.join(root, "tests")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if not (name.startswith("test") and name.endswith(".py")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            try:
                module = importlib.import_module(_module_name(rel))
            except BaseException:  # reported when the file's tests run
                ids.append(rel + "::<module>")
                continue
            for attr, obj in sorted(vars(module).items()):
                if (
                    isinstance(obj, type)
                    and issubclass(obj, unittest.TestCase)
                    and obj.__module__ == module.__name__
                ):
                    ids += [f"{rel}::{attr}::{m}" for m in unittest.TestLoader().getTestCaseNames(obj)]
                elif (
                    attr.startswith("test")
                    and callable(obj)
                    and getattr(obj, "__module__", "") == module.__name__
                ):
                    ids.append(f"{rel}::{attr}")
    return ids


def run_one(test_id, root, per_test_s):
    """Run one test id; ``(status, message)``."""
    path, _, rest = test_id.partition("::")
    try:
        module = importlib.import_module(_module_name(path))
    except BaseException:
        return "error", "cannot import " + path + ": " + _short(sys.exc_info(), root)
    parts = rest.split("::") if rest else []
    target: Any = getattr(module, parts[0], None) if parts else None
    is_case = isinstance(target, type) and issubclass(target, unittest.TestCase)
    if not (len(parts) == 2 and is_case and hasattr(target, parts[1])) and not (
        len(parts) == 1 and callable(target) and not is_case
    ):
        return "error", f"no test {rest!r} in {path}"
    signal.setitimer(signal.ITIMER_REAL, per_test_s)
    try:
        if is_case:
            result = unittest.TestResult()
            target(parts[1]).run(result)
            for bucket, status in ((result.errors, "error"), (result.failures, "failed")):
                if bucket:
                    message = bucket[0][1].strip().splitlines()[-1][:MESSAGE_CHARS]
                    return (
                        ("timeout", "the test ran too long")
                        if "TestTimeout" in message
                        else (status, message)
                    )
            return "passed", ""
        target()
        return "passed", ""
    except TestTimeout:
        return "timeout", "the test ran too long"
    except AssertionError:
        return "failed", _short(sys.exc_info(), root)
    except BaseException:
        return "error", _short(sys.exc_info(), root)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main():
    config = json.loads(sys.argv[1])
    confine = _load_confine(config["confine_path"])
    with contextlib.suppress(OSError, AttributeError):
        confine.set_pdeathsig(int(config["ppid"]))
    root = os.path.realpath(os.getcwd())
    caps = confine.confine(dict(config["confine"], writable=[root]))
    sys.path.insert(0, root)
    signal.signal(signal.SIGALRM, _alarm)
    out, err = sys.stdout, sys.stderr
    results, messages = {}, {}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        ids = config["tests"] or discover(root)
        for test_id in ids:
            status, message = run_one(test_id, root, float(config["per_test_s"]))
            results[test_id] = status
            if message:
                messages[test_id] = message
            sink.seek(0)
            sink.truncate()
    sys.stdout, sys.stderr = out, err
    os.write(
        1,
        ("\nRESULT " + json.dumps({"caps": caps, "results": results, "messages": messages}) + "\n").encode(),
    )


if __name__ == "__main__":
    main()
