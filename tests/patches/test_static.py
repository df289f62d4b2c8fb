"""Static validation (L1): every case 1–11 of REFERENCE.md §6.1 plus the known escapes.

Each rejection asserts the stable code and the 1-based line/column of the offending construct; the fail-fast
cases also assert that validation returns within one second.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from reharness.patches import (
    ValidationLimits,
    validate_file,
    validate_hook_source,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "patches"


def hook_with(body: str, prefix: str = "") -> str:
    """A hook whose body is ``body`` (indented by 4), after top-level ``prefix`` lines."""
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"{prefix}def hook(ctx, nb):\n{lines}\n"


def codes(source: str | bytes, **kwargs: Any) -> list[tuple[str, int, int]]:
    return [(e.rule, e.line, e.col) for e in validate_hook_source(source, **kwargs)]


def first(source: str | bytes, **kwargs: Any) -> tuple[str, int, int]:
    found = codes(source, **kwargs)
    assert found, f"expected a rejection of:\n{source!r}"
    return found[0]


# --- §6.1 case 1: imports -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (hook_with("return None", "import os\n"), ("forbidden_import", 1, 8)),
        (hook_with("return None", "import subprocess\n"), ("forbidden_import", 1, 8)),
        (hook_with("return None", "from os import system\n"), ("forbidden_import", 1, 1)),
        (hook_with('return __import__("os")'), ("forbidden_name", 2, 12)),
        (hook_with('return importlib.import_module("os")', "import importlib\n"), ("forbidden_import", 1, 8)),
        (hook_with('return importlib.import_module("os")'), ("forbidden_attribute", 2, 22)),
        (hook_with("import os.path\nreturn None"), ("forbidden_import", 2, 12)),
        (hook_with("from . import x\nreturn None"), ("forbidden_import", 2, 5)),
        (hook_with("from json import *\nreturn None"), ("forbidden_import", 2, 22)),
    ],
)
def test_case1_imports(source: str, expected: tuple[str, int, int]) -> None:
    assert first(source) == expected


# --- §6.1 case 2: dangerous builtins ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    ['eval("1")', 'exec("x=1")', 'compile("1", "f", "eval")', 'open("/etc/passwd")', 'getattr(ctx, "x")']
    + ["vars()", "globals()", "breakpoint()", "type(ctx)", "object()", "hasattr(ctx, 'x')", "dir()"],
)
def test_case2_forbidden_builtins(call: str) -> None:
    code, line, col = first(hook_with(f"return {call}"))
    assert (code, line, col) == ("forbidden_name", 2, 12)
    message = validate_hook_source(hook_with(f"return {call}"))[0].message
    assert "not available" in message and ";" in message  # says what to do instead


# --- §6.1 case 3: dunder chains -----------------------------------------------------------------------------
def test_case3_dunder_chains() -> None:
    found = codes(hook_with("return ().__class__.__base__.__subclasses__()"))
    assert found == [
        ("forbidden_attribute", 2, 15),
        ("forbidden_attribute", 2, 25),
        ("forbidden_attribute", 2, 34),
    ]
    assert first(hook_with("return (1).__class__.__mro__")) == ("forbidden_attribute", 2, 16)
    assert first(hook_with("return str.mro()")) == ("forbidden_attribute", 2, 16)


# --- §6.1 case 4: the match-statement escape ----------------------------------------------------------------
def test_case4_match_statement_escape_example_file() -> None:
    report = validate_file(EXAMPLES / "invalid_match_escape.json")
    assert not report.valid
    assert [(e.rule, e.line, e.col) for e in report.errors][0] == ("forbidden_node", 2, 5)
    assert {e.rule for e in report.errors} == {"forbidden_node"}
    assert "match" in report.errors[0].message


def test_case4_match_variant_locating_wrap_close_by_name() -> None:
    source = hook_with(
        "for klass in subclasses:\n"
        "    match klass:\n"
        "        case object(__name__=name) if name.endswith('wrap_close'):\n"
        "            return klass\n"
        "return None"
    )
    assert first(source) == ("forbidden_node", 3, 9)


# --- §6.1 case 5: generator / coroutine / async-generator frames --------------------------------------------
def test_case5_generator_frame() -> None:
    source = hook_with(
        'return g().gi_frame.f_globals["__builtins__"]["__import__"]("os")', "def g():\n    yield 1\n\n"
    )
    found = codes(source)
    assert found[0] == ("forbidden_node", 2, 5)  # yield
    assert ("forbidden_attribute", 5, 16) in found  # gi_frame
    assert ("forbidden_attribute", 5, 25) in found  # f_globals
    assert ("forbidden_string", 5, 35) in found  # "__builtins__"


@pytest.mark.parametrize(
    ("expression", "col"),
    [("(x for x in ctx).gi_frame", 29), ("(x for x in ctx).gi_code", 29), ("coro.cr_frame", 17)]
    + [("agen.ag_frame", 17), ("frame.f_back.f_locals", 18), ("tb.tb_frame", 15)],
)
def test_case5_frame_attributes_without_underscore(expression: str, col: int) -> None:
    assert first(hook_with(f"return {expression}")) == ("forbidden_attribute", 2, col)


def test_case5_async_definitions_rejected() -> None:
    assert first("async def c():\n    return 1\n\n" + hook_with("return None")) == ("forbidden_node", 1, 1)
    agen = "async def a():\n    yield 1\n\n" + hook_with("return None")
    assert first(agen) == ("forbidden_node", 1, 1)


# --- §6.1 case 6: dunder string keys ------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "col"), [('ctx["__class__"]', 16), ('{}.get("__builtins__")', 19)])
def test_case6_dunder_strings(expression: str, col: int) -> None:
    assert first(hook_with(f"return {expression}")) == ("forbidden_string", 2, col)


# --- §6.1 case 7: str.format field traversal ----------------------------------------------------------------
def test_case7_format_and_format_map() -> None:
    found = codes(hook_with('return "{0.__class__.__mro__}".format(ctx)'))
    assert ("forbidden_attribute", 2, 36) in found and ("forbidden_string", 2, 12) in found
    assert first(hook_with('return "{0.x}".format(ctx)')) == ("forbidden_attribute", 2, 20)
    assert first(hook_with('return "{x}".format_map(ctx)')) == ("forbidden_attribute", 2, 18)
    assert first(hook_with('return str.format("{0.x}", ctx)')) == ("forbidden_attribute", 2, 16)


def test_case7_string_formatter_is_closed_too() -> None:
    assert first(hook_with("return string.Formatter().vformat('{0.x}', [ctx], {})", "import string\n")) == (
        "forbidden_attribute",
        3,
        19,
    )
    assert first(hook_with("return None", "from string import Formatter\n")) == ("forbidden_import", 1, 20)


# --- §6.1 case 8: getattr in disguise -----------------------------------------------------------------------
def test_case8_operator_attrgetter_and_reduce_getattr() -> None:
    assert first(hook_with('return operator.attrgetter("x")(ctx)', "import operator\n")) == (
        "forbidden_import",
        1,
        8,
    )
    assert first(hook_with("return None", "from operator import attrgetter\n")) == ("forbidden_import", 1, 1)
    assert first(hook_with('return functools.reduce(getattr, ["a"], ctx)', "import functools\n")) == (
        "forbidden_name",
        3,
        29,
    )


# --- §6.1 case 9: forbidden statement and expression kinds --------------------------------------------------
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "def deco(f):\n    return f\n\n@deco\ndef hook(ctx, nb):\n    return None\n",
            ("forbidden_node", 4, 2),
        ),
        ("class M(type):\n    pass\n\n" + hook_with("return None"), ("forbidden_node", 1, 1)),
        ("class A(metaclass=M):\n    pass\n\n" + hook_with("return None"), ("forbidden_node", 1, 1)),
        (hook_with("f = lambda: 1\nreturn None"), ("forbidden_node", 2, 9)),
        (hook_with("global seen\nreturn None"), ("forbidden_node", 2, 5)),
        (hook_with("x = 1\ndef inner():\n    nonlocal x\nreturn None"), ("forbidden_node", 3, 5)),
        (hook_with("del nb['x']\nreturn None"), ("forbidden_node", 2, 5)),
        (hook_with("with ctx as c:\n    pass\nreturn None"), ("forbidden_node", 2, 5)),
        ("async def hook(ctx, nb):\n    return None\n", ("forbidden_node", 1, 1)),
        (hook_with("await ctx\nreturn None"), ("forbidden_node", 2, 5)),
        (hook_with("raise ValueError('no')"), ("forbidden_node", 2, 5)),
        (hook_with("if (n := 1):\n    return n"), ("forbidden_node", 2, 9)),
        (hook_with("assert ctx\nreturn None"), ("forbidden_node", 2, 5)),
        (hook_with("x: int = 1\nreturn x"), ("forbidden_node", 2, 5)),
        ("def hook(ctx, nb) -> None:\n    return None\n", ("forbidden_node", 1, 22)),
        ("def hook(ctx: dict, nb):\n    return None\n", ("forbidden_node", 1, 15)),
        (hook_with("return [x async for x in ctx]"), ("forbidden_node", 2, 25)),
        (hook_with("try:\n    pass\nexcept* Exception:\n    pass"), ("forbidden_node", 2, 5)),
    ],
)
def test_case9_forbidden_nodes(source: str, expected: tuple[str, int, int]) -> None:
    assert first(source) == expected
    assert validate_hook_source(source)[0].message.startswith(
        ("`", "decorators", "annotations", "nested", "async")
    )


def test_case9_names_starting_with_underscore() -> None:
    assert first(hook_with("_x = 1\nreturn _x")) == ("forbidden_name", 2, 5)
    assert first(hook_with("for _ in range(3):\n    pass\nreturn None")) == ("forbidden_name", 2, 9)
    assert first("def _helper():\n    return 1\n\n" + hook_with("return None")) == ("forbidden_name", 1, 1)
    assert first(hook_with("return dict(__x=1)")) == ("forbidden_name", 2, 17)
    assert first(hook_with("return None", "import json as _j\n")) == ("forbidden_name", 1, 8)


# --- §6.1 case 10: oversized and malformed input fails fast -------------------------------------------------
def fast(source: str | bytes, **kwargs: Any) -> tuple[str, int, int]:
    started = time.perf_counter()
    result = first(source, **kwargs)
    assert time.perf_counter() - started < 1.0
    return result


def test_case10_one_megabyte_source() -> None:
    assert fast("x = 1\n" * 175_000) == ("too_large", 1334, 3)


def test_case10_hundred_thousand_nodes() -> None:
    assert fast("x = [" + "1, " * 100_000 + "]\n")[0] == "too_large"


def test_case10_node_count_stops_at_the_first_node_over_the_limit() -> None:
    source = hook_with("return [" + ", ".join(["1"] * 3_000) + "]")
    assert fast(source, limits=ValidationLimits(max_hook_chars=100_000)) == ("too_many_nodes", 2, 3_592)


def test_case10_nesting_500_deep() -> None:
    assert fast("x = " + "(" * 500 + "1" + ")" * 500)[0] == "too_deep"  # the parser's own limit
    assert fast(hook_with("return " + "-" * 500 + "1")) == ("too_deep", 2, 30)
    assert fast(hook_with("return " + "not " * 500 + "x")) == ("too_deep", 2, 84)
    nested_ifs = "".join("    " * i + "if ctx:\n" for i in range(1, 60)) + "    " * 60 + "pass\n"
    assert fast("def hook(ctx, nb):\n" + nested_ifs) == ("too_deep", 20, 80)  # `ctx` of the 19th if
    big = ValidationLimits(max_hook_chars=10**6)
    assert fast("x = " + "-" * 100_000 + "1", limits=big) == ("too_deep", 1, 1)  # parser MemoryError caught
    assert fast("x = " + "not " * 5_000 + "y", limits=big) == (
        "too_deep",
        1,
        1,
    )  # parser RecursionError caught


def test_case10_ten_megabyte_literal() -> None:
    assert fast('x = "' + "a" * 10_000_000 + '"\n') == ("too_large", 1, 8001)
    assert fast(b'x = "' + b"a" * 10_000_000 + b'"\n') == ("too_large", 1, 1)


def test_case10_nul_byte_invalid_utf8_and_syntax_error() -> None:
    assert fast(hook_with("return 'a\x00b'")) == ("nul_byte", 2, 14)
    assert fast(hook_with("return 'caf\u00e9'").encode("utf-8")[:-1] + b"\xff\n") == ("invalid_utf8", 2, 18)
    assert fast(b"def hook(ctx, nb):\n    return '\xe9'\n") == ("invalid_utf8", 2, 13)
    found = fast(hook_with("return (1,"))
    assert found[0] == "syntax_error" and found[1] == 2
    assert "syntax error" in validate_hook_source(hook_with("return (1,"))[0].message


# --- §6.1 case 11: shape ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def on_post_step(ctx, nb):\n    return None\n", ("missing_hook", 1, 1)),
        ("x = 1\n", ("missing_hook", 1, 1)),
        ("def hook(ctx):\n    return None\n", ("bad_signature", 1, 1)),
        ("def hook(ctx, nb, extra=1):\n    return None\n", ("bad_signature", 1, 1)),
        ("def hook(nb, ctx):\n    return None\n", ("bad_signature", 1, 1)),
        ("def hook(ctx, nb, *args):\n    return None\n", ("bad_signature", 1, 1)),
        ("def hook(ctx, *, nb):\n    return None\n", ("bad_signature", 1, 1)),
        (hook_with("return None") + "\n" + hook_with("return 1"), ("duplicate_hook", 4, 1)),
        (hook_with("return None") + "hook = 3\n", ("duplicate_hook", 3, 1)),
        ("x = [0] * 10**9\n" + hook_with("return None"), ("module_level_work", 1, 5)),
        ("while True:\n    pass\n" + hook_with("return None"), ("module_level_work", 1, 1)),
        ("for i in range(9):\n    pass\n" + hook_with("return None"), ("module_level_work", 1, 1)),
        ("print('loaded')\n" + hook_with("return None"), ("module_level_work", 1, 1)),
        ("X = sorted(range(10**8))\n" + hook_with("return None"), ("module_level_work", 1, 5)),
        ("import json\njson.x = 1\n" + hook_with("return None"), ("module_level_work", 2, 6)),
        ("def f(x=[0] * 10**9):\n    return x\n\n" + hook_with("return None"), ("module_level_work", 1, 9)),
        ("def f(*args):\n    return args\n\n" + hook_with("return None"), ("bad_signature", 1, 1)),
        (
            "def f():\n    return 1\n\ndef f():\n    return 2\n\n" + hook_with("return None"),
            ("duplicate_definition", 4, 1),
        ),
        (hook_with("return 'x" + "y" * 700 + "'"), ("string_too_long", 2, 12)),
        (hook_with("return f'x" + "y" * 700 + "{ctx}'"), ("string_too_long", 2, 12)),
    ],
)
def test_case11_shape(source: str, expected: tuple[str, int, int]) -> None:
    assert first(source) == expected


def test_case11_helper_limit_and_hint_for_r1_style_names() -> None:
    helpers = "".join(f"def h{i}():\n    return {i}\n\n" for i in range(6))
    assert first(helpers + hook_with("return None")) == ("too_many_helpers", 16, 1)
    five = "".join(f"def h{i}():\n    return {i}\n\n" for i in range(5))
    assert codes(five + hook_with("return None")) == []
    message = validate_hook_source("def on_post_step(ctx, nb):\n    return None\n")[0].message
    assert "rename `def on_post_step` to `def hook`" in message


def test_case11_except_clauses() -> None:
    for clause in ("except:", "except ValueError:", "except (Exception, KeyError):", "except BaseException:"):
        assert first(hook_with(f"try:\n    pass\n{clause}\n    pass\nreturn None")) == ("bad_except", 4, 5)
    assert codes(hook_with("try:\n    x = 1\nexcept Exception as exc:\n    x = str(exc)\nreturn None")) == []


def test_case11_unknown_and_duplicate_hook_points_are_format_errors(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(
        '{"schema_version": "reharness-patch-v1", "hooks": {"on_step": "x = 1"}}'
    )
    report = validate_file(tmp_path / "p.json")
    assert [e.to_dict()["code"] for e in report.errors] == ["unknown_hook"]
    assert "on_step" in report.errors[0].message and "before_action" in report.errors[0].message
    both = '{"schema_version": "reharness-patch-v1", "hooks": {"on_post_step": "", "after_feedback": ""}}'
    (tmp_path / "q.json").write_text(both)
    assert [e.rule for e in validate_file(tmp_path / "q.json").errors] == ["duplicate_hook"]
