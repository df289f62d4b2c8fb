"""Tool-calling view of the shop's two actions: ``search(query)`` and ``click(target)``.

A tool call maps one-to-one onto WebShop's text actions (``search[query]`` / ``click[target]``), so a
tool-calling agent and a text agent drive exactly the same environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reharness.kits.shop.session import parse_action

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the shop for products. Only available on the search page "
            "(click 'back to search' to get there).",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "search keywords"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "click",
            "description": "Click one of the clickable strings of the current page: a product id, an option "
            "value, 'next >', '< prev', 'back to search', 'description', 'features', 'reviews', "
            "'attributes' or 'buy now'.",
            "parameters": {
                "type": "object",
                "properties": {"target": {"type": "string", "description": "the clickable text"}},
                "required": ["target"],
                "additionalProperties": False,
            },
        },
    },
)
_ARGUMENT = {"search": "query", "click": "target"}


def action_from_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """``search(query=…)`` -> ``search[…]`` and ``click(target=…)`` -> ``click[…]``.

    Raises ``ValueError`` naming the problem when the tool name or the arguments are malformed.
    """
    if name not in _ARGUMENT:
        raise ValueError(f"shop has no tool {name!r}; its tools are 'search' and 'click'")
    key = _ARGUMENT[name]
    if not isinstance(arguments, Mapping):
        raise ValueError(f"{name}: arguments must be an object like {{{key!r}: '...'}}")
    extra = sorted(set(arguments) - {key})
    if extra:
        raise ValueError(
            f"{name}: unexpected argument(s) {', '.join(map(repr, extra))}; it takes only {key!r}"
        )
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name}: argument {key!r} must be a non-empty string")
    return f"{name}[{value.strip()}]"


def tool_call_from_action(action: str) -> tuple[str, dict[str, Any]]:
    """Inverse of :func:`action_from_tool_call`."""
    parsed = parse_action(action)
    if parsed is None or not parsed[1]:
        raise ValueError(
            f"cannot express {action!r} as a shop tool call (expected search[...] or click[...])"
        )
    verb, argument = parsed
    return verb, {_ARGUMENT[verb]: argument}
