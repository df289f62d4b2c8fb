"""The package's import graph has no circles, and the lower layers never import the upper ones.

Every ``import`` / ``from … import`` statement counts, lazy ones (inside functions) and ``TYPE_CHECKING``
ones included: a circle that only closes at run time is still a circle. ``from package import submodule``
counts as an edge to the submodule, not to the package's ``__init__``. An import by name
(``importlib.import_module("reharness.…")`` or ``__import__``, with a literal or an f-string that starts with
one) is an import too: a lower layer may not reach up that way either. Plugins a lower layer looks up through
entry points (the kits, the tiny-agent trainer) are declared in ``pyproject.toml``, not imported by name.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import reharness

ROOT = Path(reharness.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{alias.name}" for alias in node.names]
                targets += [s for s in subs if s in modules]
                if not all(s in modules for s in subs):
                    targets.append(node.module)
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the walk found the package
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None


#: The layers, lowest first (DESIGN.md): a module may import its own layer and the layers before it, never a
#: later one. ``envs`` and ``store`` share a rank.
LAYERS: list[set[str]] = [
    {"core"},
    {"envs", "store"},
    {"models"},
    {"runtime"},
    {"patches"},
    {"failures"},
    {"measure"},
    {"engineer"},
    {"kits"},
    {"pool"},
    {"training"},
    {"experiments"},
    {"view"},  # reads what every layer below wrote (runs, improve, pools, training); only the cli is above
    {"cli"},
]
RANK = {layer: i for i, group in enumerate(LAYERS) for layer in group}
# layer -> the layers it must never import
FORBIDDEN = {layer: {above for group in LAYERS[RANK[layer] + 1 :] for above in group} for layer in RANK}


def string_imports(tree: ast.AST) -> list[str]:
    """The ``reharness`` modules that ``import_module(NAME)`` / ``__import__(NAME)`` calls in ``tree`` name
    (for an f-string, the dotted prefix before its first placeholder)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = getattr(func, "id", None) or getattr(func, "attr", None)
        if called not in ("import_module", "__import__"):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.JoinedStr):
            arg = arg.values[0] if arg.values else arg
        name = arg.value if isinstance(arg, ast.Constant) else None
        if isinstance(name, str) and name.startswith("reharness."):
            found.append(name.rstrip("."))
    return found


def test_lower_layers_never_import_upper_ones_by_name() -> None:
    wrong = []
    for module, path in _modules().items():
        layer = module.split(".")[1] if "." in module else ""
        for target in string_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target.split(".")[1] in FORBIDDEN.get(layer, set()):
                wrong.append(f"{module} -> {target} (by name)")
    assert not wrong, wrong


def test_an_import_by_name_is_seen() -> None:
    source = (
        "import importlib\n"
        "def f(name):\n"
        "    importlib.import_module('reharness.training.tiny.train')\n"
        "    __import__(f'reharness.runtime.{name}')\n"
        "    importlib.import_module(name)\n"
    )
    assert string_imports(ast.parse(source)) == ["reharness.training.tiny.train", "reharness.runtime"]


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert packages == set(RANK), packages ^ set(RANK)


def test_lower_layers_never_import_upper_ones() -> None:
    wrong = []
    for module, targets in import_graph().items():
        layer = module.split(".")[1] if "." in module else ""
        for target in targets:
            if "." in target and target.split(".")[1] in FORBIDDEN.get(layer, set()):
                wrong.append(f"{module} -> {target}")
    assert not wrong, wrong


def test_no_layer_below_the_kits_imports_one() -> None:
    """Lower layers ask the kit registry (``envs.registry``) for what a named environment provides."""
    below = {layer for layer, rank in RANK.items() if rank < RANK["kits"]}
    wrong = [
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        if "." in module and module.split(".")[1] in below
        for target in targets
        if target.startswith("reharness.kits")
    ]
    assert not wrong, wrong
