"""The ``code`` env's actions: SWE-agent / OpenHands-style commands as text, and the same as tool calls.

A reply's command is the content of its first ```` ``` ```` fence, or, without a fence, the text from its
first line that starts with a command name; the commands are listed in :data:`HELP` (the text the
harness shows the agent).

Tool calls (``view``, ``search``, ``str_replace``, ``insert``, ``run_tests``, ``submit``) map onto that
text and back, so both protocols drive the same env.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

HELP = """view [PATH] [START-END]          a file with line numbers (a range), or a directory listing
search PATTERN [PATH]            literal grep (quote patterns with spaces: search 'def f' pkg)
str_replace PATH                 replace the one occurrence of OLD by NEW
<<<<<<< SEARCH
OLD
=======
NEW
>>>>>>> REPLACE
insert PATH LINE                 insert TEXT after line LINE (0: at the top)
<<<<<<< TEXT
TEXT
>>>>>>> END
run_tests [TEST_ID ...]          the given tests (path::Class::method), or the whole suite
submit                           finish: the change is graded"""
#: Longest first line of a command (paths, patterns, test ids); longer text goes in the blocks.
MAX_COMMAND_LINE = 4000
COMMANDS = ("view", "search", "str_replace", "insert", "run_tests", "submit")
_SEARCH, _SPLIT, _REPLACE = "<<<<<<< SEARCH\n", "\n=======\n", "\n>>>>>>> REPLACE"
_TEXT, _END = "<<<<<<< TEXT\n", "\n>>>>>>> END"
USAGE = (
    "Reply with one command: view [PATH] [START-END] | search PATTERN [PATH] | str_replace PATH (with a "
    "<<<<<<< SEARCH / ======= / >>>>>>> REPLACE block) | insert PATH LINE (with a <<<<<<< TEXT / >>>>>>> END "
    "block) | run_tests [TEST_ID ...] | submit"
)


@dataclass(frozen=True)
class Command:
    """A parsed command; ``error`` says why the text is not one."""

    name: str = ""
    path: str = ""
    start: int | None = None
    end: int | None = None
    pattern: str = ""
    old: str = ""
    new: str = ""
    line: int = 0
    tests: tuple[str, ...] = field(default_factory=tuple)
    error: str = ""


def extract(text: str) -> str:
    """The command part of a reply (see module docstring)."""
    fence = text.find("```")
    if fence >= 0:
        start = text.find("\n", fence)
        close = text.find("\n```", start) if start >= 0 else -1
        if start >= 0 and close >= 0:
            return text[start + 1 : close + 1]
    offset = 0
    for line in text.splitlines(keepends=True):
        word = line.strip().split(" ", 1)[0] if line.strip() else ""
        if word in COMMANDS:
            return text[offset:].lstrip()
        offset += len(line)
    return text.strip()


def parse(text: str) -> Command:
    """Parse a reply into a :class:`Command` (never raises)."""
    body = extract(text)
    head, _, rest = body.partition("\n")
    if len(head) > MAX_COMMAND_LINE:
        return Command(
            error=f"the command line is {len(head)} characters long; the limit is {MAX_COMMAND_LINE}"
        )
    try:
        words = shlex.split(head)
    except ValueError as exc:
        return Command(error=f"cannot read the command line {head[:80]!r}: {exc}")
    if not words or words[0] not in COMMANDS:
        return Command(error="no command found. " + USAGE)
    name, args = words[0], words[1:]
    if name == "submit":
        return Command("submit")
    if name == "run_tests":
        return Command("run_tests", tests=tuple(args))
    if name == "view":
        if len(args) > 2:
            return Command(error="view takes a path and an optional range START-END")
        path = args[0] if args else "."
        if len(args) == 2:
            first, dash, last = args[1].partition("-")
            if not (first.isdigit() and (not dash or last.isdigit())):
                return Command(error=f"view: bad line range {args[1]!r} (write START-END, e.g. 10-30)")
            return Command("view", path=path, start=int(first), end=int(last) if dash else int(first))
        return Command("view", path=path)
    if name == "search":
        if not args or len(args) > 2:
            return Command(error="search takes a PATTERN and an optional PATH (quote patterns with spaces)")
        return Command("search", pattern=args[0], path=args[1] if len(args) == 2 else ".")
    if name == "str_replace":
        if len(args) != 1:
            return Command(error="str_replace takes one PATH followed by a SEARCH/REPLACE block")
        payload = "\n" + rest
        old_start = payload.find("\n" + _SEARCH)
        split = payload.find(_SPLIT, old_start + len(_SEARCH)) if old_start >= 0 else -1
        tail = payload[split + len(_SPLIT) :] if split >= 0 else ""
        close = 0 if tail.startswith(_REPLACE[1:]) else tail.find(_REPLACE)
        if old_start < 0 or split < 0 or close < 0:
            return Command(
                error="str_replace needs a block: <<<<<<< SEARCH, the old text, =======, the new text, "
                ">>>>>>> REPLACE"
            )
        old, new = payload[old_start + 1 + len(_SEARCH) : split], tail[:close]
        return Command("str_replace", path=args[0], old=old, new=new)
    if len(args) != 2 or not args[1].isdigit():
        return Command(error="insert takes a PATH and a LINE number, followed by a TEXT block")
    payload = "\n" + rest
    begin = payload.find("\n" + _TEXT)
    stop = payload.find(_END, begin + len(_TEXT)) if begin >= 0 else -1
    if begin < 0 or stop < 0:
        return Command(error="insert needs a block: <<<<<<< TEXT, the lines to insert, >>>>>>> END")
    return Command("insert", path=args[0], line=int(args[1]), new=payload[begin + 1 + len(_TEXT) : stop])


# ---------------------------------------------------------------------------------------------- rendering
def _q(word: str) -> str:
    return shlex.quote(word)


def render(command: Command) -> str:
    """The canonical text of a command (``parse(render(c)) == c``)."""
    name = command.name
    if name == "view":
        rng = f" {command.start}-{command.end}" if command.start is not None else ""
        return f"view {_q(command.path)}{rng}"
    if name == "search":
        return f"search {_q(command.pattern)} {_q(command.path)}"
    if name == "str_replace":
        return f"str_replace {_q(command.path)}\n{_SEARCH}{command.old}{_SPLIT}{command.new}{_REPLACE}"
    if name == "insert":
        return f"insert {_q(command.path)} {command.line}\n{_TEXT}{command.new}{_END}"
    if name == "run_tests":
        return " ".join(["run_tests", *(_q(t) for t in command.tests)])
    return "submit"


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_STR = {"type": "string"}
_INT = {"type": "integer"}
TOOLS: list[dict[str, Any]] = [
    _spec(
        "view",
        "Show a file with line numbers (optionally lines start_line..end_line) or list a directory.",
        {"path": _STR, "start_line": _INT, "end_line": _INT},
        ["path"],
    ),
    _spec(
        "search",
        "Find a literal text in the files under path (grep).",
        {"pattern": _STR, "path": _STR},
        ["pattern"],
    ),
    _spec(
        "str_replace",
        "Replace old_str by new_str in a file; old_str must occur exactly once.",
        {"path": _STR, "old_str": _STR, "new_str": _STR},
        ["path", "old_str", "new_str"],
    ),
    _spec(
        "insert",
        "Insert text after line insert_line of a file (0 inserts at the top).",
        {"path": _STR, "insert_line": _INT, "text": _STR},
        ["path", "insert_line", "text"],
    ),
    _spec(
        "run_tests",
        "Run the given test ids (path::Class::method), or the whole test suite when none are given.",
        {"tests": {"type": "array", "items": _STR}},
        [],
    ),
    _spec("submit", "Finish: your change is graded against the hidden and existing tests.", {}, []),
]


def _arg(arguments: Mapping[str, Any], key: str, kind: type, required: bool = True) -> Any:
    if key not in arguments:
        if required:
            raise ValueError(f"missing argument {key!r}")
        return None
    value = arguments[key]
    if kind is int and isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"argument {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def action_from_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """Map a tool call onto the canonical command text (``ValueError`` when malformed)."""
    if not isinstance(arguments, Mapping):
        raise ValueError(f"tool arguments must be an object, got {type(arguments).__name__}")
    if name == "view":
        start, end = _arg(arguments, "start_line", int, False), _arg(arguments, "end_line", int, False)
        if end is not None and start is None:
            start = 1
        if start is not None and end is None:
            end = start
        return render(Command("view", path=_arg(arguments, "path", str), start=start, end=end))
    if name == "search":
        path = _arg(arguments, "path", str, False) or "."
        return render(Command("search", pattern=_arg(arguments, "pattern", str), path=path))
    if name == "str_replace":
        return render(
            Command(
                "str_replace",
                path=_arg(arguments, "path", str),
                old=_arg(arguments, "old_str", str),
                new=_arg(arguments, "new_str", str),
            )
        )
    if name == "insert":
        path, line = _arg(arguments, "path", str), _arg(arguments, "insert_line", int)
        return render(Command("insert", path=path, line=line, new=_arg(arguments, "text", str)))
    if name == "run_tests":
        tests = _arg(arguments, "tests", list, False) or []
        if not all(isinstance(t, str) for t in tests):
            raise ValueError("'tests' must be an array of test ids")
        return render(Command("run_tests", tests=tuple(tests)))
    if name == "submit":
        return "submit"
    raise ValueError(f"code has no tool {name!r} (tools: {', '.join(COMMANDS)})")


def tool_call_from_action(action: str) -> tuple[str, dict[str, Any]]:
    """Inverse of :func:`action_from_tool_call` (``ValueError`` for text that is not a command)."""
    c = parse(action)
    if c.error:
        raise ValueError(f"not a code action: {action[:80]!r} ({c.error})")
    if c.name == "view":
        args: dict[str, Any] = {"path": c.path}
        if c.start is not None:
            args |= {"start_line": c.start, "end_line": c.end}
        return "view", args
    if c.name == "search":
        return "search", {"pattern": c.pattern, "path": c.path}
    if c.name == "str_replace":
        return "str_replace", {"path": c.path, "old_str": c.old, "new_str": c.new}
    if c.name == "insert":
        return "insert", {"path": c.path, "insert_line": c.line, "text": c.new}
    if c.name == "run_tests":
        return "run_tests", {"tests": list(c.tests)} if c.tests else {}
    return "submit", {}
