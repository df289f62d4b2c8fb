"""The AST rules of static validation (L1) for one hook's source.

Checks run in order of cost and stop early where later checks would be meaningless or slow: size and NUL
bytes before parsing; ``ast.parse`` guarded against ``RecursionError``/``MemoryError`` on deep input; node
count and nesting depth measured iteratively (stopping at the first node over a limit); then the node-type
allow-list, names, attributes, constants, imports, ``except`` clauses, the module shape (one
``def hook(ctx, nb)``, a few helpers, no work at module level) and leakage. Rules follow REFERENCE.md §6 §5.1
and Harness-R1 (§1). This is defence in depth and clear error messages, not the security boundary: the
sandbox must hold even when these checks are bypassed.

Hand-written because no library fits: RestrictedPython rewrites code and relies on in-process guards (the
design rejects in-process sandboxing), and linters do not give allow-list semantics.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reharness.patches.errors import PatchValidationError
from reharness.patches.leakage import LeakageEvidence
from reharness.patches.policy import (
    ALLOWED_MODULES,
    ALLOWED_NODES,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_NAMES,
    HOOK_FUNCTION,
    HOOK_PARAMS,
    LEAF_NODES,
    NAME_FIXES,
    NODE_FIXES,
    ValidationLimits,
)
from reharness.runtime.effects import HARNESS_R1_ALIASES, HOOK_POINTS

_HOOK_NAMES = frozenset(HOOK_POINTS) | frozenset(HARNESS_R1_ALIASES)


def _error(code: str, message: str, line: int, col: int, hook: str | None) -> PatchValidationError:
    return PatchValidationError(code, message, line=line, col=col, hook=hook)


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of character ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _parse(source: str, hook: str | None) -> ast.Module | PatchValidationError:
    try:
        return ast.parse(source, filename=f"<{hook or 'patch'}>", mode="exec", type_comments=False)
    except SyntaxError as exc:
        text = str(exc.msg)
        line, col = exc.lineno or 1, exc.offset or 1
        if "too many nested parentheses" in text or "too many levels of indentation" in text:
            return _error("too_deep", f"{text}; flatten the code with helper variables", line, col, hook)
        fix = "fix the Python syntax (hooks are plain Python 3.11 functions)"
        return _error("syntax_error", f"syntax error: {text}; {fix}", line, col, hook)
    except (RecursionError, MemoryError):
        msg = "the code nests too deeply for the parser; split long expressions with helper variables"
        return _error("too_deep", msg, 1, 1, hook)
    except ValueError as exc:  # e.g. NUL bytes when the pre-check was skipped
        return _error("syntax_error", f"cannot parse: {exc}", 1, 1, hook)


class _Rules:
    """Collects rule violations of one parsed hook."""

    def __init__(
        self, source: str, hook: str | None, limits: ValidationLimits, evidence: LeakageEvidence | None
    ) -> None:
        self.lines = source.splitlines()
        self.hook = hook
        self.limits = limits
        self.evidence = evidence if evidence is not None and not evidence.is_empty() else None
        self.errors: list[PatchValidationError] = []
        self.top_level_defs: set[int] = set()

    def where(self, node: ast.AST) -> tuple[int, int]:
        line = getattr(node, "lineno", 1) or 1
        offset = getattr(node, "col_offset", 0) or 0
        if isinstance(node, ast.Attribute) and node.end_lineno and node.end_col_offset is not None:
            # point at the attribute's name, not at the start of the whole ``a.b.c`` expression
            line, offset = node.end_lineno, node.end_col_offset - len(node.attr.encode("utf-8"))
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        # ast offsets count UTF-8 bytes; report characters, 1-based
        return line, len(text.encode("utf-8")[:offset].decode("utf-8", errors="ignore")) + 1

    def add(self, code: str, node: ast.AST, message: str) -> None:
        line, col = self.where(node)
        self.errors.append(_error(code, message, line, col, self.hook))

    # --- names, attributes, constants -------------------------------------------------------------------
    def identifier(self, name: str, node: ast.AST, what: str = "name") -> None:
        if name.startswith("_"):
            self.add(
                "forbidden_name", node, f"{what} {name!r} starts with '_'; rename it without the underscore"
            )
        elif name in FORBIDDEN_NAMES:
            fix = NAME_FIXES.get(name, "use the data in ctx and the allowed builtins instead")
            self.add("forbidden_name", node, f"{name!r} is not available in patch code; {fix}")

    def attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.add(
                "forbidden_attribute",
                node,
                f"attribute {node.attr!r} starts with '_'; patches may not use it",
            )
        elif node.attr in FORBIDDEN_ATTRIBUTES:
            fix = "use an f-string" if node.attr in ("format", "format_map", "vformat") else "remove it"
            self.add("forbidden_attribute", node, f"attribute {node.attr!r} reaches Python internals; {fix}")
        elif isinstance(node.ctx, ast.Store):
            msg = "assigning to attributes is not allowed (ctx is read-only, modules are shared); use nb"
            self.add("forbidden_attribute", node, msg)

    def constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str | bytes):
            text = value if isinstance(value, str) else value.decode("latin-1")
            if "__" in text:
                self.add("forbidden_string", node, "string constants may not contain '__'; rephrase the text")
            if len(text) > self.limits.max_string_chars:
                self.add(
                    "string_too_long",
                    node,
                    f"string literal of {len(text)} characters; the limit is {self.limits.max_string_chars}",
                )
        elif isinstance(value, int | float) and not isinstance(value, bool):
            text = repr(value)
        else:
            return
        self.leakage(text, node)

    def leakage(self, text: str, node: ast.AST) -> None:
        found = self.evidence.find(text) if self.evidence is not None else None
        if found:
            fix = "describe the general failure mode instead of copying facts from the failure evidence"
            self.add("leakage", node, f"the code contains the {found}; {fix}")

    # --- statements ------------------------------------------------------------------------------------
    def function(self, node: ast.FunctionDef) -> None:
        self.identifier(node.name, node, "function name")
        if id(node) not in self.top_level_defs:
            limit = self.limits.max_helpers
            msg = f"nested function {node.name!r}; move it to the top level (at most {limit} helpers)"
            self.add("forbidden_node", node, msg)
        for decorator in node.decorator_list:
            self.add("forbidden_node", decorator, "decorators are not allowed; call the helper explicitly")
        if node.returns is not None:
            self.add(
                "forbidden_node", node.returns, "annotations are not allowed; remove the `-> ...` annotation"
            )
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is None:
                continue
            self.identifier(arg.arg, arg, "parameter")
            if arg.annotation is not None:
                self.add("forbidden_node", arg.annotation, "annotations are not allowed; remove `: ...`")
        if node.name != HOOK_FUNCTION and (args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg):
            msg = "helpers take plain positional parameters only (no '/', '*', '*args' or '**kwargs')"
            self.add("bad_signature", node, f"{msg}; got def {node.name}({ast.unparse(args)})")
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if not _is_constant_expr(default):
                msg = "default values are computed when the patch loads; use a constant or None"
                self.add("module_level_work", default, msg)

    def handler(self, node: ast.ExceptHandler) -> None:
        if node.type is None:
            self.add("bad_except", node, "bare `except:` is not allowed; write `except Exception:`")
        elif not (isinstance(node.type, ast.Name) and node.type.id == "Exception"):
            got = ast.unparse(node.type)
            self.add("bad_except", node, f"only `except Exception:` is allowed, got `except {got}:`")
        if node.name is not None:
            self.identifier(node.name, node, "exception name")

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        allowed = ", ".join(ALLOWED_MODULES)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_MODULES:
                    self.add(
                        "forbidden_import", alias, f"module {alias.name!r} is not allowed; allowed: {allowed}"
                    )
                if alias.asname:
                    self.identifier(alias.asname, alias, "import alias")
            return
        module = node.module or ""
        if node.level or module not in ALLOWED_MODULES:
            self.add(
                "forbidden_import",
                node,
                f"module {'.' * node.level + module!r} is not allowed; allowed: {allowed}",
            )
            return
        for alias in node.names:
            if alias.name == "*":
                self.add(
                    "forbidden_import",
                    alias,
                    f"`from {module} import *` is not allowed; import names explicitly",
                )
            elif alias.name.startswith("_") or alias.name in FORBIDDEN_ATTRIBUTES | FORBIDDEN_NAMES:
                self.add("forbidden_import", alias, f"{module}.{alias.name} is not available to patches")
            if alias.asname:
                self.identifier(alias.asname, alias, "import alias")

    def forbidden_node(self, node: ast.AST) -> None:
        kind = type(node).__name__
        fix = NODE_FIXES.get(kind) or ("use if/elif instead of `match`" if kind.startswith("Match") else "")
        self.add(
            "forbidden_node", node, f"`{kind}` is not allowed in patch code" + (f"; {fix}" if fix else "")
        )

    # --- the two passes --------------------------------------------------------------------------------
    def shape(self, tree: ast.Module) -> None:
        hooks: list[ast.stmt] = []
        helpers: list[ast.FunctionDef] = []
        seen: set[str] = set()
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                if isinstance(stmt, ast.FunctionDef):
                    self.top_level_defs.add(id(stmt))
                if stmt.name == HOOK_FUNCTION:
                    hooks.append(stmt)
                else:
                    if stmt.name in seen and isinstance(stmt, ast.FunctionDef):
                        self.add(
                            "duplicate_definition", stmt, f"helper {stmt.name!r} is defined twice; rename one"
                        )
                    seen.add(stmt.name)
                    if isinstance(stmt, ast.FunctionDef):
                        helpers.append(stmt)
            elif isinstance(stmt, ast.Assign):
                self.module_assign(stmt)
            elif type(stmt) in ALLOWED_NODES and not _is_harmless_top_level(stmt):
                kind = type(stmt).__name__
                msg = f"`{kind}` at module level runs when the patch loads; move it into hook() or a helper"
                self.add("module_level_work", stmt, msg)
        if not hooks:
            renamed = next((h for h in helpers if h.name in _HOOK_NAMES or h.name.startswith("hook")), None)
            hint = f" (rename `def {renamed.name}` to `def hook`)" if renamed is not None else ""
            msg = "no top-level `def hook(ctx, nb):`; each hook's code must define exactly one" + hint
            self.errors.append(_error("missing_hook", msg, 1, 1, self.hook))
        for extra in hooks[1:]:
            self.add("duplicate_hook", extra, "`def hook` is defined more than once; keep exactly one")
        if hooks and isinstance(hooks[0], ast.FunctionDef):
            self.signature(hooks[0])
        if len(helpers) > self.limits.max_helpers:
            msg = (
                f"{len(helpers)} helper functions; at most {self.limits.max_helpers} are allowed besides hook"
            )
            self.add("too_many_helpers", helpers[self.limits.max_helpers], msg)

    def signature(self, node: ast.FunctionDef) -> None:
        args = node.args
        names = [a.arg for a in args.args]
        plain = not (args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults)
        if not plain or tuple(names) != HOOK_PARAMS:
            msg = f"declare the hook exactly as `def hook(ctx, nb):`, got `def hook({ast.unparse(args)}):`"
            self.add("bad_signature", node, msg)

    def module_assign(self, stmt: ast.Assign) -> None:
        for target in stmt.targets:
            for name in _target_names(target):
                if name is None:
                    msg = "only plain names can be assigned at module level (no items or attributes)"
                    self.add("module_level_work", target, msg)
                elif name == HOOK_FUNCTION:
                    self.add(
                        "duplicate_hook", target, "`hook` is reassigned at module level; keep one `def hook`"
                    )
        if not _is_constant_expr(stmt.value):
            msg = "module-level assignments must be constants (numbers, strings, lists/dicts of them); "
            self.add("module_level_work", stmt.value, msg + "compute values inside hook() or a helper")

    def walk(self, tree: ast.Module) -> None:
        """Pre-order, iterative; a forbidden node is reported once and its subtree is not searched further."""
        stack: list[ast.AST] = [tree]
        while stack and len(self.errors) < self.limits.max_errors:
            node = stack.pop()
            if type(node) not in ALLOWED_NODES:
                self.forbidden_node(node)
                continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
            if isinstance(node, ast.Name):
                self.identifier(node.id, node)
            elif isinstance(node, ast.Attribute):
                self.attribute(node)
            elif isinstance(node, ast.Constant):
                self.constant(node)
            elif isinstance(node, ast.JoinedStr):
                size = sum(
                    len(v.value)
                    for v in node.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                )
                if size > self.limits.max_string_chars:
                    msg = f"f-string of {size} characters; the limit is {self.limits.max_string_chars}"
                    self.add("string_too_long", node, msg)
            elif isinstance(node, ast.FunctionDef):
                self.function(node)
            elif isinstance(node, ast.ExceptHandler):
                self.handler(node)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.imports(node)
            elif isinstance(node, ast.keyword) and node.arg is not None:
                self.identifier(node.arg, node, "keyword argument")
            elif isinstance(node, ast.comprehension) and node.is_async:
                self.add("forbidden_node", node.target, "async comprehensions are not allowed")


def _target_names(target: ast.expr) -> Iterator[str | None]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)
    else:
        yield None


def _is_constant_expr(node: ast.expr | None) -> bool:
    """A literal: constants and (nested) tuples/lists/sets/dicts of them, or a signed number."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_is_constant_expr(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_constant_expr(k) for k in node.keys) and all(
            _is_constant_expr(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant) and isinstance(
            node.operand.value, int | float | complex
        )
    return False


def _is_harmless_top_level(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
        return True
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _measure(
    tree: ast.Module, limits: ValidationLimits, hook: str | None, rules: _Rules
) -> PatchValidationError | None:
    """Count nodes and measure nesting iteratively; stop at the first node over a limit."""
    stack: list[tuple[ast.AST, int, ast.AST]] = [(tree, 0, tree)]
    count = 0
    while stack:
        node, depth, located = stack.pop()
        located = node if hasattr(node, "lineno") else located
        count += 1
        if count > limits.max_nodes:
            line, col = rules.where(located)
            msg = f"more than {limits.max_nodes} AST nodes; make the hook smaller (drop unused code)"
            return _error("too_many_nodes", msg, line, col, hook)
        if depth > limits.max_depth:
            line, col = rules.where(located)
            msg = f"nesting deeper than {limits.max_depth} levels; flatten it with helper variables"
            return _error("too_deep", msg, line, col, hook)
        for child in reversed(list(ast.iter_child_nodes(node))):  # pre-order: report the first node over
            stack.append((child, depth if isinstance(child, LEAF_NODES) else depth + 1, located))
    return None


def check_source(
    source: str, *, hook: str | None, limits: ValidationLimits, evidence: LeakageEvidence | None
) -> list[PatchValidationError]:
    """All rule violations of one hook's source (already decoded), sorted by position."""
    if len(source) > limits.max_hook_chars:
        line, col = _position(source, limits.max_hook_chars)
        msg = (
            f"the code is {len(source)} characters; the limit is {limits.max_hook_chars} per hook; shorten it"
        )
        return [_error("too_large", msg, line, col, hook)]
    nul = source.find("\x00")
    if nul >= 0:
        line, col = _position(source, nul)
        return [_error("nul_byte", "the code contains a NUL byte; remove it", line, col, hook)]
    tree = _parse(source, hook)
    if isinstance(tree, PatchValidationError):
        return [tree]
    rules = _Rules(source, hook, limits, evidence)
    measured = _measure(tree, limits, hook, rules)
    if measured is not None:
        return [measured]
    rules.shape(tree)
    rules.walk(tree)
    return sorted(rules.errors, key=lambda e: (e.line, e.col))[: limits.max_errors]
