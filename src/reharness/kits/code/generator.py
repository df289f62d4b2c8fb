"""The generator of ``code`` instances: a small Python package, a unittest suite, one injected bug, an issue.

A package (``<pkg>/``, 3–4 modules of 1–3 functions drawn from :mod:`.templates`, an ``__init__``, a README)
gets a ``tests/`` suite of ``unittest`` cases, one test class per function. One mutation site is chosen and
the bug injected into the base tree. Expected values come from running the *correct* code (our own generated
code, run here at generation time); a case where the buggy code behaves differently reveals the bug. The base
tree's tests are the non-revealing cases (``PASS_TO_PASS``); the ``test_patch`` adds revealing cases to the
buggy function's test class (``FAIL_TO_PASS``); the gold ``patch`` undoes the mutation. The issue text is
written from the first revealing case: the call, what it does, what it should do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from reharness.kits.code.diff import make_diff
from reharness.kits.code.schema import CodeInstance, tree_hash
from reharness.kits.code.templates import TEMPLATES, Built, Case, Mutation

PACKAGES = ("tally", "ledgerly", "metrify", "textkit", "numkit", "calcs", "bookkeep", "gradebook", "utilo")
MODULE_NAMES = {
    "numbers": ("numbers", "ranges", "seqs"),
    "stats": ("stats", "summary", "aggregate"),
    "money": ("money", "pricing", "finance"),
    "text": ("text", "strings", "parsing"),
    "dates": ("dates", "calendar_utils"),
    "grades": ("grades", "scoring"),
}
_MAX_TRIES = 50


@dataclass(frozen=True)
class Outcome:
    """What one call did: ``("value", repr)`` or ``("raises", "ExcType", message)``."""

    kind: str
    value: str
    message: str = ""


def load_source(source: str) -> dict[str, Any]:
    """Execute a generated module (our own, trusted code) and return its namespace."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace


def run_call(namespace: dict[str, Any], case: Case) -> Outcome:
    """Run ``case`` in a generated module's namespace and describe what happened."""
    try:
        value = eval(f"{case.fn}({case.args})", namespace)  # noqa: S307 - our own generated code
    except Exception as exc:
        return Outcome("raises", type(exc).__name__, str(exc))
    return Outcome("value", repr(value))


def _class_name(fn: str) -> str:
    return "Test" + "".join(part.capitalize() for part in fn.split("_"))


def _test_method(module: str, case: Case, outcome: Outcome, name: str) -> str:
    call = f"{module}.{case.fn}({case.args})"
    if outcome.kind == "raises":
        return (
            f"    def {name}(self):\n        with self.assertRaises({outcome.value}):\n            {call}\n"
        )
    return f"    def {name}(self):\n        self.assertEqual({call}, {outcome.value})\n"


def _test_file(pkg: str, module: str, classes: dict[str, list[str]]) -> str:
    parts = [f'"""Tests of {pkg}.{module}."""\n\nimport unittest\n\nfrom {pkg} import {module}\n']
    for fn, methods in classes.items():
        parts.append(f"\n\nclass {_class_name(fn)}(unittest.TestCase):\n" + "\n".join(methods))
    parts.append('\n\nif __name__ == "__main__":\n    unittest.main()\n')
    return "".join(parts)


def _issue(rng: random.Random, pkg: str, module: str, case: Case, good: Outcome, bad: Outcome) -> str:
    call = f"{pkg}.{module}.{case.fn}({case.args})"
    if bad.kind == "raises":
        got = f"raises `{bad.value}: {bad.message}`" if bad.message else f"raises `{bad.value}`"
    else:
        got = f"returns `{bad.value}`"
    want = f"raise `{good.value}`" if good.kind == "raises" else f"return `{good.value}`"
    title = rng.choice(
        (
            f"`{case.fn}` gives the wrong result",
            f"Bug in `{pkg}.{module}.{case.fn}`",
            f"Unexpected behaviour of `{case.fn}`",
        )
    )
    body = rng.choice(
        (
            f"Calling `{call}` {got}, but it should {want}.",
            f"When I run `{call}` it {got}. I expected it to {want}.",
            f"`{call}` {got}; according to the docstring it should {want}.",
        )
    )
    return f"{title}\n\n{body}\n"


def _draw_package(rng: random.Random) -> tuple[str, dict[str, list[Built]]]:
    pkg = rng.choice(PACKAGES)
    names = rng.sample(sorted(TEMPLATES), rng.randint(5, 7))
    modules: dict[str, list[Built]] = {}
    chosen: dict[str, str] = {}
    for key in names:
        built = TEMPLATES[key](rng)
        module = chosen.setdefault(built.category, rng.choice(MODULE_NAMES[built.category]))
        modules.setdefault(module, []).append(built)
    if len(modules) < 3:
        return _draw_package(rng)
    return pkg, modules


def _module_source(pkg: str, module: str, builts: list[Built]) -> str:
    consts = "".join(b.constants for b in builts)
    head = f'"""{module.replace("_", " ").capitalize()} helpers of {pkg}."""\n\n'
    return head + (consts + "\n\n" if consts else "") + "\n\n".join(b.source for b in builts)


def make_instance(rng: random.Random, instance_id: str) -> CodeInstance:
    """Draw one generated instance (see module docstring)."""
    for _ in range(_MAX_TRIES):
        instance = _try_instance(rng, instance_id)
        if instance is not None:
            return instance
    raise RuntimeError("could not generate a code instance with a revealing test")  # pragma: no cover


def _try_instance(rng: random.Random, instance_id: str) -> CodeInstance | None:
    pkg, modules = _draw_package(rng)
    sources = {m: _module_source(pkg, m, b) for m, b in modules.items()}
    sites: dict[str, list[tuple[str, Mutation]]] = {}
    for module, builts in sorted(modules.items()):
        for mutation in (m for built in builts for m in built.mutations):
            if sources[module].count(mutation.old) == 1:
                sites.setdefault(mutation.kind, []).append((module, mutation))
    if not sites:
        return None
    target, mutation = rng.choice(sites[rng.choice(sorted(sites))])  # kinds about equally often
    source = sources[target]
    buggy = source.replace(mutation.old, mutation.new)
    base_tests: dict[str, str] = {}
    patched_tests: dict[str, str] = {}
    fail: list[str] = []
    passing: list[str] = []
    issue = ""
    buggy_ns = load_source(buggy)
    for module, builts in sorted(modules.items()):
        correct_ns = load_source(sources[module])
        before: dict[str, list[str]] = {}
        after: dict[str, list[str]] = {}
        path = f"tests/test_{module}.py"
        for built in builts:
            for fn in built.functions:
                before.setdefault(fn, [])
                after.setdefault(fn, [])
            counters: dict[str, int] = {}
            for case in built.cases:
                good = run_call(correct_ns, case)
                bad = run_call(buggy_ns, case) if module == target else good
                counters[case.fn] = counters.get(case.fn, 0) + 1
                name = f"test_{case.fn}_{counters[case.fn]}"
                method = _test_method(module, case, good, name)
                test_id = f"{path}::{_class_name(case.fn)}::{name}"
                if bad == good:
                    before[case.fn].append(method)
                    after[case.fn].append(method)
                    passing.append(test_id)
                else:
                    after[case.fn].append(method)
                    fail.append(test_id)
                    issue = issue or _issue(rng, pkg, module, case, good, bad)
        base_tests[path] = _test_file(pkg, module, before)
        patched_tests[path] = _test_file(pkg, module, after)
    if not fail or len(passing) < 3:
        return None
    files = _base_files(pkg, sources, target, buggy, base_tests)
    fixed = dict(files) | {f"{pkg}/{target}.py": source}
    with_tests = dict(files) | patched_tests
    commit = tree_hash(files)
    return CodeInstance(
        instance_id=f"reharness-gen__{pkg}-{commit[:8]}",
        repo=f"reharness-gen/{pkg}",
        base_commit=commit,
        problem_statement=issue,
        patch=make_diff(files, fixed),
        test_patch=make_diff(files, with_tests),
        FAIL_TO_PASS=fail,
        PASS_TO_PASS=passing,
        version="0.1",
        files=files,
        bug_kind=mutation.kind,
    )


def _base_files(
    pkg: str, sources: dict[str, str], target: str, buggy: str, tests: dict[str, str]
) -> dict[str, str]:
    files = {f"{pkg}/{m}.py": (buggy if m == target else s) for m, s in sources.items()}
    exports = "".join(f"from {pkg} import {m}\n" for m in sorted(sources))
    files[f"{pkg}/__init__.py"] = f'"""The {pkg} package."""\n\n{exports}'
    files["tests/__init__.py"] = ""
    files |= tests
    readme = (
        f"# {pkg}\n\nSmall helpers: {', '.join(sorted(sources))}.\n\nRun the tests: `python -m unittest`.\n"
    )
    files["README.md"] = readme
    return files
