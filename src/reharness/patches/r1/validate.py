"""Harness-R1's validator for ``r1``-dialect patches: accept what it accepts, reject what it rejects.

The rules are those of the official ``compile_hook`` and ``normalize_patch`` (docs/r1-interop.md,
spec §1.2 and §4.1), re-implemented from their description: only top-level ``def`` statements, exactly one
``def hook(ctx, nb)``, at most 5 helpers with plain names, no decorators/annotations, literal defaults,
≤ 1200 AST nodes, ≤ 8000 characters, string literals ≤ 700 characters, the official forbidden node types,
names and attributes, ``try`` only with ``except Exception``, the ALFWorld numbered-instance literal rule,
and a description (cleaned, cut to 900 characters) without task-leakage patterns. Imports are rejected
(``re``, ``math`` and ``SequenceMatcher`` are pre-injected instead).

One rule is stricter than the official one, and it concerns only Python internals no working patch needs:
attributes that reach frames and code objects (``gi_frame``, ``f_globals``, ``tb_frame``, ``co_code`` …)
are rejected. The sandbox is the security boundary either way.
"""

from __future__ import annotations

import ast
import re

from reharness.patches.errors import PatchValidationError
from reharness.patches.policy import R1_BUILTINS, R1_INJECTED
from reharness.runtime.r1.factory import adapter_class
from reharness.runtime.r1.normalise import clean, is_numbered_instance

MAX_CODE_CHARS = 8000
MAX_NODES = 1200
MAX_HELPERS = 5
MAX_STRING_CHARS = 700
FORBIDDEN: frozenset[str] = frozenset(
    [
        "breakpoint",
        "classmethod",
        "compile",
        "delattr",
        "dir",
        "eval",
        "exec",
        "exit",
        "getattr",
        "globals",
        "help",
        "input",
        "locals",
        "memoryview",
        "object",
        "open",
        "property",
        "quit",
        "setattr",
        "staticmethod",
        "super",
        "type",
        "vars",
        "__import__",
    ]
)
#: Stricter than upstream: attributes reaching frames/code (never needed by a working hook).
INTERNAL_ATTRIBUTES: frozenset[str] = frozenset(
    [
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_back",
        "f_code",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
    ]
)
_FORBIDDEN_NODES: dict[type[ast.AST], str] = {
    ast.AsyncFunctionDef: "async def",
    ast.Await: "await",
    ast.ClassDef: "class",
    ast.Delete: "del",
    ast.Global: "global",
    ast.Import: "import (re, math and SequenceMatcher are pre-injected)",
    ast.ImportFrom: "from ... import (re, math and SequenceMatcher are pre-injected)",
    ast.Lambda: "lambda",
    ast.Nonlocal: "nonlocal",
    ast.Raise: "raise",
    ast.With: "with",
    ast.AsyncWith: "async with",
    ast.While: "while",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
}
_LEAKAGE = (
    re.compile(r"\bB0[A-Za-z0-9]{8}\b"),
    re.compile(r"\b(?:task|index|sample)\s*#?\s*\d+\b", re.IGNORECASE),
    re.compile(r"\bwebshop\s+\d+\b", re.IGNORECASE),
    re.compile(r"\balfworld\s+\d+\b", re.IGNORECASE),
)
_RESERVED = frozenset(R1_BUILTINS) | frozenset(R1_INJECTED) | {"hook"}


class _Checker:
    def __init__(self, hook: str | None, benchmark: str | None) -> None:
        self.hook = hook
        self.benchmark = benchmark
        adapter = adapter_class(benchmark) if benchmark else None
        self.forbid_instances = adapter is not None and adapter.forbid_numbered_instances
        self.errors: list[PatchValidationError] = []

    def add(self, code: str, node: ast.AST | None, message: str) -> None:
        line = getattr(node, "lineno", 1) if node is not None else 1
        col = (getattr(node, "col_offset", 0) if node is not None else 0) + 1
        self.errors.append(PatchValidationError(code, message, line=line, col=col, hook=self.hook))

    def name(self, name: str, node: ast.AST, what: str = "name") -> None:
        if name.startswith("_"):
            self.add("forbidden_name", node, f"{what} {name!r} starts with '_' (Harness-R1 rejects it)")
        elif name in FORBIDDEN:
            self.add("forbidden_name", node, f"{name!r} is forbidden in Harness-R1 hook code")

    def module(self, tree: ast.Module) -> None:
        hooks: list[ast.FunctionDef] = []
        helpers: list[ast.FunctionDef] = []
        for stmt in tree.body:
            if not isinstance(stmt, ast.FunctionDef):
                kind = type(stmt).__name__
                self.add(
                    "module_level_work", stmt, f"only top-level `def` statements are allowed, got {kind}"
                )
                continue
            (hooks if stmt.name == "hook" else helpers).append(stmt)
        if len(hooks) != 1:
            self.add("missing_hook" if not hooks else "duplicate_hook", None, "define exactly one `def hook`")
        if len(helpers) > MAX_HELPERS:
            self.add("too_many_helpers", helpers[MAX_HELPERS], f"at most {MAX_HELPERS} helper functions")
        seen: set[str] = set()
        for helper in helpers:
            if helper.name in _RESERVED:
                self.add(
                    "forbidden_name", helper, f"helper {helper.name!r} shadows a builtin or injected name"
                )
            if helper.name in seen:
                self.add("duplicate_definition", helper, f"helper {helper.name!r} is defined twice")
            seen.add(helper.name)
            self.helper_args(helper)
        for fn in hooks:
            a = fn.args
            plain = not (a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults)
            if not plain or [x.arg for x in a.args] != ["ctx", "nb"]:
                self.add("bad_signature", fn, "declare the hook exactly as `def hook(ctx, nb):`")
        for fn in hooks + helpers:
            if fn.decorator_list:
                self.add("forbidden_node", fn, "decorators are not allowed")
            if fn.returns is not None or any(x.annotation is not None for x in fn.args.args):
                self.add("forbidden_node", fn, "annotations are not allowed")
            for inner in ast.walk(fn):
                if inner is not fn and isinstance(inner, ast.FunctionDef):
                    self.add("forbidden_node", inner, "nested function definitions are not allowed")

    def helper_args(self, fn: ast.FunctionDef) -> None:
        a = fn.args
        if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg:
            self.add("bad_signature", fn, "helpers take plain positional parameters only")
        names = [x.arg for x in a.args]
        if len(set(names)) != len(names):
            self.add("bad_signature", fn, "duplicate parameter names")
        for default in a.defaults:
            ok = isinstance(default, ast.Constant) and (
                default.value is None or isinstance(default.value, str | int | float | bool)
            )
            if not ok:
                self.add("module_level_work", default, "defaults may only be literal str/int/float/bool/None")

    def walk(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            kind = _FORBIDDEN_NODES.get(type(node))
            if kind is not None:
                self.add("forbidden_node", node, f"`{kind}` is not allowed in Harness-R1 hook code")
            elif isinstance(node, ast.Try | ast.TryStar):
                self.try_(node)
            elif isinstance(node, ast.Name):
                self.name(node.id, node)
            elif isinstance(node, ast.arg):
                self.name(node.arg, node, "parameter")
            elif isinstance(node, ast.Attribute):
                self.name(node.attr, node, "attribute")
                if node.attr in INTERNAL_ATTRIBUTES:
                    self.add("forbidden_attribute", node, f"attribute {node.attr!r} reaches Python internals")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.string(node.value, node)

    def try_(self, node: ast.Try | ast.TryStar) -> None:
        if isinstance(node, ast.TryStar) or node.orelse or node.finalbody or not node.handlers:
            self.add("bad_except", node, "`try` may only have `except Exception` handlers (no else/finally)")
        for handler in node.handlers:
            if not (isinstance(handler.type, ast.Name) and handler.type.id == "Exception"):
                self.add("bad_except", handler, "only `except Exception:` (optionally `as name`) is allowed")
            if handler.name is not None:
                self.name(handler.name, handler, "exception name")

    def string(self, value: str, node: ast.AST) -> None:
        if len(value) > MAX_STRING_CHARS:
            self.add("string_too_long", node, f"string literal over {MAX_STRING_CHARS} characters")
        if self.forbid_instances and is_numbered_instance(value):
            msg = "string literal names a numbered ALFWorld instance action; choose from ctx.admissible"
            self.add("numbered_instance", node, msg)


def check_r1_hook(code: str, *, hook: str | None, benchmark: str | None) -> list[PatchValidationError]:
    """Every official compile rule ``code`` breaks (``benchmark``: the env name, for the ALFWorld rule)."""
    if not code.strip():
        return [PatchValidationError("empty_hook", "the hook code is empty", line=1, col=1, hook=hook)]
    if len(code) > MAX_CODE_CHARS:
        msg = f"the code is {len(code)} characters; Harness-R1's limit is {MAX_CODE_CHARS}"
        return [PatchValidationError("too_large", msg, line=1, col=1, hook=hook)]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", 1) or 1
        return [PatchValidationError("syntax_error", f"cannot parse: {exc}", line=line, col=1, hook=hook)]
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        msg = f"{nodes} AST nodes; Harness-R1's limit is {MAX_NODES} (Load/Store contexts count too)"
        return [PatchValidationError("too_many_nodes", msg, line=1, col=1, hook=hook)]
    checker = _Checker(hook, benchmark)
    checker.module(tree)
    checker.walk(tree)
    return sorted(checker.errors, key=lambda e: (e.line, e.col))


def check_r1_description(description: str) -> list[PatchValidationError]:
    """The official description rules: cleaned (whitespace collapsed, cut to 900 characters, as upstream
    does rather than rejecting), then rejected when it matches a task-leakage pattern."""
    text = clean(description)  # the official text cleaning, as the runtime applies it to messages
    for pattern in _LEAKAGE:
        found = pattern.search(text)
        if found:
            msg = f"the description names a task or product ({found.group(0)!r}); describe the failure mode"
            return [PatchValidationError("leakage", msg, line=0, col=0)]
    return []
