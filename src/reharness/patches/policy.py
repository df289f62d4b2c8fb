"""What patch code may use: the allow-lists and limits of static validation (L1).

One module of plain constants (stdlib only) so that the static validator and the sandbox worker share the same
lists: the worker builds its restricted ``__builtins__`` from :data:`SAFE_BUILTINS` and pre-imports
:data:`ALLOWED_MODULES`. The lists follow REFERENCE.md §1 (Harness-R1's rules) and §6 §5.1 (the L1 design):
node types are an allow-list, so anything new or unknown in a future Python is rejected by default.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: Builtins a hook may call; the sandbox worker exposes exactly these (plus ``None``/``True``/``False``).
SAFE_BUILTINS: tuple[str, ...] = (
    "abs",
    "all",
    "any",
    "bool",
    "chr",
    "dict",
    "divmod",
    "enumerate",
    "Exception",
    "filter",
    "float",
    "frozenset",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "ord",
    "pow",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "slice",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
)

#: Harness-R1's hook builtins: exactly these 25 names (its ``code_runner``); used by the ``r1`` dialect.
R1_BUILTINS: tuple[str, ...] = (
    "abs", "all", "any", "bool", "dict", "enumerate", "Exception", "filter", "float", "int", "isinstance",
    "len", "list", "map", "max", "min", "range", "reversed", "round", "set", "sorted", "str", "sum",
    "tuple", "zip",
)  # fmt: skip
#: Globals Harness-R1 pre-injects into every hook namespace (``r1`` dialect).
R1_INJECTED: tuple[str, ...] = ("re", "math", "SequenceMatcher")
#: Harness-R1's per-call line budget (``sys.settrace`` "line" events, library code included).
R1_LINE_BUDGET = 2000

#: Pure modules a patch may import (exact names; no submodules). ``operator`` is deliberately absent:
#: ``attrgetter``/``methodcaller`` are ``getattr`` in disguise (RestrictedPython PR #330).
ALLOWED_MODULES: tuple[str, ...] = (
    "bisect",
    "collections",
    "difflib",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "re",
    "statistics",
    "string",
    "textwrap",
)

#: Names a patch may never mention (builtins reaching the interpreter, introspection, I/O, REPL helpers).
FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "open",
        "__import__",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "vars",
        "globals",
        "locals",
        "dir",
        "input",
        "breakpoint",
        "help",
        "memoryview",
        "type",
        "super",
        "object",
        "classmethod",
        "staticmethod",
        "property",
        "exit",
        "quit",
        "copyright",
        "credits",
        "license",
        "BaseException",
    }
)

#: Attributes without a leading underscore that still reach frames, code, classes or non-allowed modules.
FORBIDDEN_ATTRIBUTES: frozenset[str] = frozenset(
    {
        # generator / coroutine / async-generator frames and code (simpleeval #138)
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "cr_origin",
        "ag_frame",
        "ag_code",
        "ag_await",
        # frames, tracebacks, code objects
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_back",
        "f_code",
        "f_trace",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
        # class hierarchy and str.format field traversal ("{0.__class__}", CVE-2023-41039, PR #258)
        "mro",
        "format",
        "format_map",
        # string.Formatter re-implements field traversal in Python (CVE-2026-76825)
        "Formatter",
        "vformat",
        "get_field",
        "get_value",
        # modules reachable from allowed ones: re.enum.sys, json.codecs.builtins, statistics.sys, ...
        "sys",
        "os",
        "builtins",
        "bltns",
        "codecs",
        "copyreg",
        "enum",
        "random",
        "numbers",
        "modules",
        "importlib",
        "import_module",
        "reload",
        "posix",
        "subprocess",
        "system",
        "popen",
    }
)

#: Node types patch code may contain. Everything else (``Match*``, ``ClassDef``, ``With``, ``Async*``,
#: ``Await``, ``Yield*``, ``Global``, ``Nonlocal``, ``Delete``, ``Raise``, ``Lambda``, ``NamedExpr``,
#: ``AnnAssign``, ``Assert``, ``TryStar`` and any node type added by a future Python) is rejected.
ALLOWED_NODES: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Module,
        ast.FunctionDef,
        ast.arguments,
        ast.arg,
        ast.Return,
        ast.Assign,
        ast.AugAssign,
        ast.If,
        ast.For,
        ast.While,
        ast.Break,
        ast.Continue,
        ast.Pass,
        ast.Expr,
        ast.Try,
        ast.ExceptHandler,
        ast.Import,
        ast.ImportFrom,
        ast.alias,
        ast.BoolOp,
        ast.BinOp,
        ast.UnaryOp,
        ast.Compare,
        ast.IfExp,
        ast.Call,
        ast.keyword,
        ast.Name,
        ast.Constant,
        ast.Attribute,
        ast.Subscript,
        ast.Slice,
        ast.Starred,
        ast.List,
        ast.Tuple,
        ast.Dict,
        ast.Set,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
        ast.comprehension,
        ast.JoinedStr,
        ast.FormattedValue,
        ast.Load,
        ast.Store,
        *(
            cls
            for base in (ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
            for cls in base.__subclasses__()
        ),
    }
)

#: How to fix code that uses a forbidden node type (for the error messages).
NODE_FIXES: dict[str, str] = {
    "Lambda": "define a small helper function with `def` at the top level instead",
    "ClassDef": "use dicts and helper functions instead of classes",
    "With": "patches cannot manage resources; remove the `with` block",
    "Raise": "return None (no effect) instead of raising",
    "Assert": "use `if not ...: return None` instead of assert",
    "Global": "keep state across calls in the notebook `nb` instead of globals",
    "Nonlocal": "keep state across calls in the notebook `nb` instead",
    "Delete": "use `nb.pop(key, None)` instead of `del`",
    "Yield": "return a list instead of yielding",
    "YieldFrom": "return a list instead of yielding",
    "Await": "hooks are plain functions; remove `await`",
    "AsyncFunctionDef": "use a plain `def`",
    "AsyncFor": "use a plain `for`",
    "AsyncWith": "remove the `async with` block",
    "NamedExpr": "assign on its own line instead of using `:=`",
    "AnnAssign": "remove the type annotation",
    "Match": "use if/elif instead of `match`",
    "TryStar": "use `except Exception:` instead of `except*`",
}
#: How to do without a forbidden name.
NAME_FIXES: dict[str, str] = {
    "getattr": "read fields with ctx['key'], ctx.key or ctx.get('key')",
    "hasattr": "test membership with `'key' in ctx`",
    "setattr": "ctx is read-only; keep state in nb",
    "delattr": "ctx is read-only; keep state in nb",
    "type": "use isinstance(x, T)",
    "open": "patches cannot do I/O; read what you need from ctx",
    "input": "patches cannot do I/O; read what you need from ctx",
    "eval": "write the logic directly in the hook",
    "exec": "write the logic directly in the hook",
    "compile": "write the logic directly in the hook",
    "vars": "keep state in nb",
    "globals": "keep state in nb",
    "locals": "keep state in nb",
}

#: Leaf node types that carry no structure; they are counted as nodes but not as nesting levels.
LEAF_NODES: tuple[type[ast.AST], ...] = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)

#: The one hook function every hook's code defines, and its parameters.
HOOK_FUNCTION = "hook"
HOOK_PARAMS = ("ctx", "nb")


@dataclass(frozen=True)
class ValidationLimits:
    """Size and shape limits of static validation; defaults follow Harness-R1 (REFERENCE.md §1)."""

    max_hook_chars: int = 8_000  # characters of source per hook, checked before parsing
    max_total_bytes: int = 16_384  # UTF-8 bytes of all hooks' source together, checked before parsing
    max_nodes: int = 1_200  # AST nodes per hook (every node ``ast.walk`` yields)
    max_depth: int = 20  # nesting of statements and expressions (leaf nodes such as ``Load`` not counted)
    max_helpers: int = 5  # helper ``def``s besides ``hook``
    max_string_chars: int = 700  # characters per string literal
    max_errors: int = 50  # stop collecting after this many errors

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"ValidationLimits.{name} must be a non-negative int, got {value!r}")
