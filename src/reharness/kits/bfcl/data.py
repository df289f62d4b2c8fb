"""BFCL multi-turn data: entries, ground truth, function docs, the scenario split, and call parsing.

Data files are read as JSON from the installed ``bfcl_eval`` package (nothing of it is imported here).

**The split is by scenario, and all of it is BFCL's test data.** BFCL v4 publishes only an evaluation set:
200 scenarios, each in four categories (``base``, ``miss_func``, ``miss_param``, ``long_context``) that share
the scenario's initial state. reharness assigns each *scenario number* (the ``N`` of ``multi_turn_base_N``)
to ``train`` / ``valid`` / ``test`` by a stable hash (about 60/20/20), so the variants of one scenario never
fall on both sides of a split. Use ``train`` / ``valid`` for developing harness patches and report on
``test`` — and say the numbers come from BFCL's public test set, partitioned by reharness.

Calls are Python call expressions (BFCL's format: ``cd(folder='document')``, or a list of them). They are
parsed here with :mod:`ast` and must be plain calls of an available function with literal arguments; only
those reach the confined worker (:mod:`.worker`), which executes them with BFCL's own code.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cache
from typing import Any

from reharness.core.errors import EnvError
from reharness.core.hashing import derive_seed

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
END_TURN = "end_turn"
_SPLIT_OF_BUCKET = (("train", 60), ("valid", 80), ("test", 100))


def _find_spec(module: str) -> Any:
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a module blocked in sys.modules, or a broken parent package
        return None


def package_dir(module: str, env_name: str = "bfcl") -> str:
    """Directory of an installed package, or an :class:`EnvError` with the install command."""
    spec = _find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EnvError(
            f"{env_name} needs the Python package {module!r}, which is not installed",
            hint="run: pip install --no-deps bfcl-eval mpmath (with --no-deps: bfcl-eval's declared "
            "dependencies pull a multi-GB CUDA stack; `pip install 'reharness[bfcl]'` adds mpmath only)",
        )
    return str(next(iter(spec.submodule_search_locations)))


def module_root(module: str) -> str:
    """The ``sys.path`` entry a package is imported from (its parent directory)."""
    spec = _find_spec(module)
    if spec is None or spec.origin is None:
        return package_dir(module)
    origin = os.path.dirname(spec.origin)
    return os.path.dirname(origin) if spec.submodule_search_locations else origin


def split_of_scenario(number: int) -> str:
    """The reharness split that owns BFCL scenario ``number`` (all four categories of it)."""
    bucket = derive_seed("bfcl-scenario", number) % 100
    return next(split for split, upper in _SPLIT_OF_BUCKET if bucket < upper)


def _jsonl(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@cache
def load_category(category: str) -> tuple[tuple[dict[str, Any], list[list[str]]], ...]:
    """(entry, ground truth) of every scenario of ``category``, in BFCL's order."""
    if category not in CATEGORIES:
        raise EnvError(f"bfcl: unknown category {category!r}", hint=f"choose one of {list(CATEGORIES)}")
    data = os.path.join(package_dir("bfcl_eval"), "data")
    entries = _jsonl(os.path.join(data, f"BFCL_v4_multi_turn_{category}.json"))
    answers = {
        a["id"]: a["ground_truth"]
        for a in _jsonl(os.path.join(data, "possible_answer", f"BFCL_v4_multi_turn_{category}.json"))
    }
    return tuple((entry, answers[entry["id"]]) for entry in entries)


@cache
def function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    path = os.path.join(package_dir("bfcl_eval"), "data", "multi_turn_func_doc", DOC_FILES[class_name])
    return tuple(_jsonl(path))


def scenario_number(entry_id: str) -> int:
    return int(entry_id.rsplit("_", 1)[1])


@dataclass(frozen=True)
class Call:
    """One parsed call: function name, positional and keyword literal arguments, canonical source."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: str


class CallSyntaxError(ValueError):
    """The action is not a call (or list of calls) of a function with literal arguments."""


def parse_calls(text: str) -> list[Call]:
    """Parse ``f(a=1)`` or ``[f(a=1), g('x')]`` into calls; anything else raises :class:`CallSyntaxError`."""
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise CallSyntaxError(f"not a Python call expression: {exc.msg}") from None
    nodes = tree.elts if isinstance(tree, ast.List | ast.Tuple) else [tree]
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise CallSyntaxError(f"expected a call like name(arg=value), got {ast.unparse(node)[:80]!r}")
        try:
            args = tuple(ast.literal_eval(a) for a in node.args)
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            raise CallSyntaxError(f"arguments of {node.func.id} must be literal values") from None
        if any(k.arg is None for k in node.keywords):
            raise CallSyntaxError(f"{node.func.id}: **kwargs are not allowed")
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        calls.append(Call(node.func.id, args, kwargs, f"{node.func.id}({', '.join(parts)})"))
    return calls


_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


def _json_schema(schema: Any) -> Any:
    """BFCL's parameter schema with Python type names mapped to JSON Schema's (dict → object, …)."""
    if isinstance(schema, dict):
        out = {k: _json_schema(v) for k, v in schema.items()}
        if isinstance(out.get("type"), str):
            out["type"] = _JSON_TYPES.get(out["type"], out["type"])
        return out
    if isinstance(schema, list):
        return [_json_schema(v) for v in schema]
    return schema


def tool_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style tool spec from one BFCL function doc."""
    return {
        "type": "function",
        "function": {
            "name": doc["name"],
            "description": doc.get("description", ""),
            "parameters": _json_schema(doc.get("parameters", {"type": "dict", "properties": {}})),
        },
    }


def signature(doc: dict[str, Any]) -> str:
    """A one-line signature for the text protocol: ``cd(folder: string) - Change the current …``."""
    params = doc.get("parameters", {})
    required = set(params.get("required", []))
    parts = [
        f"{name}: {spec.get('type', 'any')}" + ("" if name in required else " = optional")
        for name, spec in params.get("properties", {}).items()
    ]
    description = str(doc.get("description", "")).split("Tool description:")[-1].strip()
    return f"{doc['name']}({', '.join(parts)}) - {description[:160]}"
