"""Safe parsing of patch documents (JSON or YAML text, or a file) into plain data.

Patch documents come from language models and users, so parsing is bounded and strict: a size cap checked
before parsing, UTF-8 only, JSON without NaN/Infinity and without duplicate keys, ``RecursionError`` and
``ValueError`` from the decoder caught (REFERENCE.md §6 §4 item 8), and YAML through the safe loader with
aliases refused (no "billion laughs") and duplicate keys refused (PyYAML silently keeps the last one).
Every failure is a :class:`~reharness.patches.errors.PatchFormatError` naming the source and how to fix it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from reharness.patches.errors import PatchFormatError
from reharness.runtime.effects import HARNESS_R1_ALIASES, HOOK_POINTS

#: Largest patch document accepted (a valid patch is far smaller: 16 KB of code at most).
MAX_DOCUMENT_BYTES = 1 << 20


def format_error(source: str, field: str | None, problem: str, fix: str, code: str) -> PatchFormatError:
    """A :class:`PatchFormatError` naming the source, the field (``None``: the whole document), the fix."""
    where = f"{source}: field {field!r}: " if field else f"{source}: "
    return PatchFormatError(where + problem, hint=fix, code=code)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _duplicate(source: str, key: str) -> PatchFormatError:
    code = "duplicate_hook" if key in HOOK_POINTS or key in HARNESS_R1_ALIASES else "duplicate_key"
    return format_error(
        source, key, "the key appears twice in one object", "keep one of the two entries", code
    )


def parse_json(text: str, source: str) -> Any:
    """Strict JSON: no NaN/Infinity, no duplicate keys, bounded nesting."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except _DuplicateKey as exc:
        raise _duplicate(source, exc.key) from None
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise format_error(source, None, problem, "fix the JSON syntax", "invalid_json") from None
    except RecursionError:
        raise format_error(
            source, None, "JSON nested too deeply", "flatten the document", "invalid_json"
        ) from None
    except ValueError as exc:
        raise format_error(
            source, None, f"invalid JSON: {exc}", "fix the JSON value", "invalid_json"
        ) from None


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML without aliases and without duplicate keys."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)  # type: ignore[no-any-return]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise _DuplicateKey(str(key_node.value))
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


#: libyaml's event parser when PyYAML was built with it (fast, in C), else the pure-Python one.
_EVENT_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_YAML_DEPTH = 64


def _prescan_yaml(text: str, source: str) -> None:
    """Reject aliases and deep nesting from the event stream before the (slow, recursive) Python composer."""
    depth = 0
    for event in yaml.parse(text, Loader=_EVENT_LOADER):
        if isinstance(event, yaml.AliasEvent):
            fix = "write the value out instead of referring to an anchor"
            raise format_error(
                source, None, "invalid YAML: aliases (*name) are not allowed", fix, "invalid_yaml"
            )
        if isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                problem = f"invalid YAML: nested deeper than {MAX_YAML_DEPTH} levels"
                raise format_error(source, None, problem, "flatten the document", "invalid_yaml")
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            depth -= 1


def parse_yaml(text: str, source: str) -> Any:
    """Safe YAML: no aliases, no duplicate keys, bounded nesting, no Python objects."""
    try:
        _prescan_yaml(text, source)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as exc:
        raise _duplicate(source, exc.key) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = f"invalid YAML{at}: {exc.problem or exc.context}"
        raise format_error(source, None, problem, "fix the YAML syntax", "invalid_yaml") from None
    except (yaml.YAMLError, RecursionError) as exc:
        problem = f"invalid YAML: {type(exc).__name__}"
        raise format_error(source, None, problem, "fix the YAML syntax", "invalid_yaml") from None


def parse_text(text: str, source: str) -> Any:
    """JSON when the text starts with ``{`` (after whitespace), YAML otherwise."""
    if len(text) > MAX_DOCUMENT_BYTES:
        problem = f"the document is {len(text)} characters; the limit is {MAX_DOCUMENT_BYTES}"
        raise format_error(source, None, problem, "patches hold at most 16 KB of code", "too_large")
    if text.lstrip().startswith("{"):
        return parse_json(text, source)
    return parse_yaml(text, source)


def read_text(path: str | Path) -> str:
    """The UTF-8 text of a patch file, read with a size cap (a UTF-8 BOM is dropped)."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        raise format_error(source, None, "no such file", "check the path", "not_found") from None
    except IsADirectoryError:
        fix = "pass a patch file (JSON or YAML) inside it"
        raise format_error(source, None, "is a directory, not a patch file", fix, "not_found") from None
    except OSError as exc:
        raise format_error(
            source, None, f"cannot read: {exc.strerror}", "check the path", "not_found"
        ) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        problem = f"the file is larger than {MAX_DOCUMENT_BYTES} bytes"
        raise format_error(source, None, problem, "patches hold at most 16 KB of code", "too_large")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problem = f"not valid UTF-8 at byte {exc.start} (line {line})"
        raise format_error(source, None, problem, "save the file as UTF-8", "invalid_utf8") from None
