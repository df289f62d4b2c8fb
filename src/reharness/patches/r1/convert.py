"""``reharness patch convert``: translate a patch between the ``reharness`` and ``r1`` dialects.

A translation is made only where it is faithful — the translated hooks see the same values and have the
same effects — and otherwise refused with a :class:`ConversionError` naming every construct that cannot be
translated. What is translated:

- the effect key: reharness's ``{"type": ...}`` ↔ Harness-R1's ``{"kind": ...}``, with the effect names
  mapped (``block`` → ``block_and_prompt``, ``rewrite`` → ``rewrite_action``, ``force`` → ``force_action``,
  ``hint`` → ``inject_hint``; before a decision the key is dropped). The value must be a literal;
- the namespace: Harness-R1 pre-injects ``re``, ``math`` and ``SequenceMatcher`` and rejects imports, so
  ``import re`` / ``import math`` / ``from difflib import SequenceMatcher`` are removed going to ``r1`` and
  added going to ``reharness``; any other import cannot be translated;
- ``ctx`` reads are checked, not rewritten: only top-level fields with the same meaning in both views
  (:func:`shared_fields`: the adapter's, e.g. ``observation``, ``max_step``, ALFWorld's ``admissible``)
  translate; every other field read is named in the error (e.g. ``ctx.counters`` has no Harness-R1 equivalent,
  ``ctx.state`` and ``ctx.step`` mean different things). ``ctx`` handed whole to a helper is followed into the
  helper when the helper's parameter is also named ``ctx``; any other whole use of ``ctx`` is refused.

The result is checked by the target dialect's validator. Code is re-emitted with :func:`ast.unparse`, so
comments and formatting are not kept.
"""

from __future__ import annotations

import ast
from typing import Any

from reharness.core.errors import ReharnessError
from reharness.patches.model import Patch
from reharness.patches.sandbox.r1_dialect import split_blocks
from reharness.runtime.r1.factory import adapter_class, r1_benchmarks


def shared_fields(env: str | None) -> frozenset[str]:
    """The ``ctx`` fields that mean the same in both dialects for ``env`` (its r1 adapter's
    ``shared_fields``; none for an env without a Harness-R1 benchmark)."""
    adapter = adapter_class(env) if env else None
    return adapter.shared_fields if adapter is not None else frozenset()


TO_R1 = {
    "block": "block_and_prompt",
    "rewrite": "rewrite_action",
    "force": "force_action",
    "hint": "inject_hint",
}
TO_R1 |= {v: v for v in TO_R1.values()} | {"message": "message"}
INJECTED = {
    "re": "import re",
    "math": "import math",
    "SequenceMatcher": "from difflib import SequenceMatcher",
}


class ConversionError(ReharnessError):
    """The patch has no faithful translation into the requested dialect."""

    code = "not_translatable"


def _ctx_reads(tree: ast.Module) -> tuple[set[str], list[str]]:
    """Top-level ctx fields read, and problems (whole-ctx uses that cannot be followed)."""
    helpers = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    fields: set[str] = set()
    problems: list[str] = []
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "ctx" and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute):
            if parent.attr == "get":
                call = parents.get(parent)
                if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
                    fields.add(str(call.args[0].value))
                    continue
                problems.append(f"line {node.lineno}: ctx.get(...) with a computed key")
            else:
                fields.add(parent.attr)
            continue
        if isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant):
            fields.add(str(parent.slice.value))
            continue
        if isinstance(parent, ast.Compare) and isinstance(parent.left, ast.Constant):  # "x" in ctx
            fields.add(str(parent.left.value))
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in helpers:
            helper = helpers[parent.func.id]
            index = parent.args.index(node) if node in parent.args else -1
            names = [a.arg for a in helper.args.args]
            if 0 <= index < len(names) and names[index] == "ctx":
                continue  # the helper's own ctx reads are collected by this same walk
        problems.append(f"line {node.lineno}: ctx is used as a whole (`{ast.unparse(parent or node)[:60]}`)")
    return fields, problems


class _Effects(ast.NodeTransformer):
    """Rename the effect key of dict literals (``type`` ↔ ``kind``) and map the effect names."""

    def __init__(self, to: str, point: str) -> None:
        self.to = to
        self.point = point
        self.problems: list[str] = []
        self.source_key = "type" if to == "r1" else "kind"

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        self.generic_visit(node)
        keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
        if self.source_key not in keys:
            return node
        i = keys.index(self.source_key)
        value = node.values[i]
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            self.problems.append(
                f"line {node.lineno}: the effect {self.source_key!r} is computed; write a literal"
            )
            return node
        name = value.value.strip()
        if self.to == "r1":
            if name not in TO_R1:
                self.problems.append(f"line {node.lineno}: effect type {name!r} has no Harness-R1 kind")
                return node
            if self.point in ("on_init", "before_decision"):  # Harness-R1 reads only the message/skills there
                del node.keys[i], node.values[i]
                return node
            node.keys[i], node.values[i] = ast.Constant("kind"), ast.Constant(TO_R1[name])
        else:
            node.keys[i] = ast.Constant("type")
        return node


def _imports(tree: ast.Module, to: str, point: str) -> list[str]:
    problems = []
    if to == "r1":
        kept: list[ast.stmt] = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                text = ast.unparse(stmt)
                if text not in INJECTED.values():
                    problems.append(f"{point}: `{text}` (Harness-R1 rejects imports; only re, math and "
                                    "SequenceMatcher are available, pre-injected)")  # fmt: skip
                continue
            kept.append(stmt)
        tree.body = kept
        return problems
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imports = [ast.parse(INJECTED[name]).body[0] for name in INJECTED if name in used]
    tree.body = imports + tree.body
    return problems


def convert_hook(code: str, point: str, to: str, env: str | None) -> tuple[str, list[str]]:
    """One hook's code in dialect ``to``, and the problems that make the translation unfaithful."""
    tree = ast.parse(code)
    fields, problems = _ctx_reads(tree)
    foreign = sorted(fields - shared_fields(env))
    if foreign:
        reads = ", ".join(f"ctx.{f}" for f in foreign)
        problems.append(f"{point}: reads {reads}, which {'has' if len(foreign) == 1 else 'have'} no "
                        f"equivalent with the same meaning in the other dialect")  # fmt: skip
    problems += _imports(tree, to, point)
    effects = _Effects(to, point)
    tree = effects.visit(tree)
    problems += [f"{point}: {p}" for p in effects.problems]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", problems


def convert_patch(patch: Patch, to: str) -> Patch:
    """``patch`` in dialect ``to`` (``reharness`` or ``r1``); :class:`ConversionError` when unfaithful."""
    if to not in ("reharness", "r1"):
        raise ConversionError(f"unknown dialect {to!r}", hint="use --to reharness or --to r1")
    if patch.dialect == to:
        return patch
    if to == "r1" and patch.env is None:
        known = ", ".join(r1_benchmarks().values())
        raise ConversionError("a Harness-R1 patch names its benchmark", hint=f"set env ({known})")
    hooks: dict[str, str] = {}
    problems: list[str] = []
    for point, code in patch.hooks.items():
        blocks = len(split_blocks(code)) if patch.dialect == "r1" else 1
        if blocks > 1:
            problems.append(
                f"{point}: the hook is repeated ({blocks} code blocks, each in its own namespace); "
                "reharness has one hook per point — merge the blocks by hand"
            )
            continue
        hooks[point], found = convert_hook(code, point, to, patch.env)
        problems += found
    if problems:
        raise ConversionError(
            f"no faithful translation to the {to} dialect: " + "; ".join(problems),
            hint="rewrite those parts by hand against the target ctx (docs/r1-interop.md lists both)",
        )
    metadata: dict[str, Any] = {**patch.metadata, "converted_from": patch.dialect}
    converted = Patch(hooks, patch.description, patch.env, metadata, to)
    from reharness.patches.validate import validate_patch

    errors = validate_patch(converted)
    if errors:
        listing = "; ".join(f"{e.hook}:{e.line} [{e.rule}] {e.message}" for e in errors[:5])
        raise ConversionError(f"the translation breaks the {to} dialect's rules: {listing}")
    return converted
