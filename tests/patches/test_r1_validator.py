"""The ``r1`` dialect's validator accepts what Harness-R1's ``compile_hook``/``normalize_patch`` accept and
rejects what they reject (spec §1.2, §4.1)."""

# ruff: noqa: E501 - hook sources and spec tables are written out one per line

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reharness.patches.model import HARNESS_R1_SCHEMA, Patch, load_patch
from reharness.patches.validate import validate_file, validate_patch


def r1_patch(
    code: str, hook: str = "on_post_step", benchmark: str = "webshop", description: str = "d"
) -> Patch:
    return Patch.from_dict(
        {
            "schema_version": HARNESS_R1_SCHEMA,
            "benchmark": benchmark,
            "description": description,
            "actions": [{"type": "add_code_hook", "hook": hook, "code": code}],
        }
    )


def rules(code: str, **kw: str) -> list[str]:
    return [e.rule for e in validate_patch(r1_patch(code, **kw))]


ACCEPTED = [
    # the pre-injected modules, used without importing
    'def hook(ctx, nb):\n    m = re.search(r"(\\d+)", ctx.observation)\n    return {"kind": "inject_hint", '
    '"message": str(math.floor(1.5)) + str(bool(m))}\n',
    "def hook(ctx, nb):\n    return {'message': str(SequenceMatcher(None, 'a', 'b').ratio())}\n",
    # str.format is an ordinary method upstream
    "def hook(ctx, nb):\n    return {'message': 'step {}'.format(ctx.step)}\n",
    "def helper(x, y=3, z='a', w=None, v=True, u=1.5):\n    return x\n\ndef hook(ctx, nb):\n    return helper(1)\n",
    "def hook(ctx, nb):\n    try:\n        return ctx.state.page_type\n    except Exception as exc:\n        return None\n",
    "def hook(ctx, nb):\n    for i in range(3):\n        nb['i'] = i\n    return None\n",
]
REJECTED = [
    ("import re\ndef hook(ctx, nb):\n    return None\n", "forbidden_node"),
    ("from difflib import SequenceMatcher\ndef hook(ctx, nb):\n    return None\n", "forbidden_node"),
    ("X = 1\ndef hook(ctx, nb):\n    return None\n", "module_level_work"),
    ('"""doc"""\ndef hook(ctx, nb):\n    return None\n', "module_level_work"),
    ("def hook(ctx, nb):\n    p = re.compile('x')\n    return None\n", "forbidden_name"),
    ("def hook(ctx, nb):\n    t = type(ctx)\n    return None\n", "forbidden_name"),
    ("def hook(ctx, nb):\n    input = 1\n    return None\n", "forbidden_name"),
    ("def hook(ctx, nb):\n    return ctx.type\n", "forbidden_name"),
    ("def hook(ctx, nb):\n    return ctx._data\n", "forbidden_name"),
    ("def hook(ctx, nb):\n    while True:\n        pass\n", "forbidden_node"),
    ("def hook(ctx, nb):\n    f = lambda x: x\n    return None\n", "forbidden_node"),
    ("def hook(ctx, nb):\n    raise ValueError()\n", "forbidden_node"),
    ("def hook(ctx, nb):\n    def inner():\n        return 1\n    return None\n", "forbidden_node"),
    ("def hook(ctx, nb):\n    try:\n        pass\n    finally:\n        pass\n", "bad_except"),
    ("def hook(ctx, nb):\n    try:\n        pass\n    except ValueError:\n        pass\n", "bad_except"),
    ("def hook(ctx, nb):\n    try:\n        pass\n    except:\n        pass\n", "bad_except"),
    ("def hook(ctx):\n    return None\n", "bad_signature"),
    ("def hook(ctx, nb=None):\n    return None\n", "bad_signature"),
    ("def hook(ctx, nb) -> None:\n    return None\n", "forbidden_node"),
    ("def re(x):\n    return x\ndef hook(ctx, nb):\n    return None\n", "forbidden_name"),
    ("def len(x):\n    return x\ndef hook(ctx, nb):\n    return None\n", "forbidden_name"),
    ("def helper(x=[]):\n    return x\ndef hook(ctx, nb):\n    return None\n", "module_level_work"),
    ("".join(f"def h{i}():\n    return {i}\n" for i in range(6)) + "def hook(ctx, nb):\n    return None\n",
     "too_many_helpers"),
    ("def helper():\n    return 1\n", "missing_hook"),
    ("def hook(ctx, nb):\n    return '" + "x" * 701 + "'\n", "string_too_long"),
    ("def hook(ctx, nb):\n    return ctx.gi_frame\n", "forbidden_attribute"),  # stricter than upstream
]  # fmt: skip


@pytest.mark.parametrize("code", ACCEPTED)
def test_official_accepts(code: str) -> None:
    assert rules(code) == []


@pytest.mark.parametrize(("code", "rule"), REJECTED)
def test_official_rejects(code: str, rule: str) -> None:
    assert rule in rules(code)


def test_node_and_size_limits_count_like_upstream() -> None:
    many = "def hook(ctx, nb):\n" + "".join(f"    a{i} = {i}\n" for i in range(300)) + "    return None\n"
    assert rules(many) == ["too_many_nodes"]  # 300 assignments are 1200+ nodes with their Store contexts
    assert rules("def hook(ctx, nb):\n    return None\n" + "#" * 8000) == ["too_large"]


def test_numbered_instance_literals_are_rejected_on_alfworld_only() -> None:
    code = "def hook(ctx, nb):\n    return {'kind': 'force_action', 'action': 'go to cabinet 1'}\n"
    assert rules(code, benchmark="alfworld") == ["numbered_instance"]
    assert rules(code, benchmark="webshop") == []
    innocent = "def hook(ctx, nb):\n    return {'message': 'take 2 steps back'}\n"
    assert rules(innocent, benchmark="alfworld") == ["numbered_instance"]  # upstream hits innocent text too


def test_description_rules() -> None:
    hook = "def hook(ctx, nb):\n    return None\n"
    assert rules(hook, description="x" * 901) == []  # upstream cuts the cleaned text to 900 characters
    assert rules(hook, description="x" * 900 + " task 12") == []  # the cut happens before the leakage check
    assert rules(hook, description="fixes task 12 only") == ["leakage"]
    assert rules(hook, description="buy B0ABCDEFGH") == ["leakage"]
    assert rules(hook, description="  a   fine\n description ") == []


def test_dialect_selection_and_override(tmp_path: Path) -> None:
    doc = {
        "schema_version": HARNESS_R1_SCHEMA,
        "benchmark": "dbbench",
        "description": "d",
        "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": "import re\ndef hook(ctx, nb):\n    return None\n"}],
    }  # fmt: skip
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    assert load_patch(path).dialect == "r1"
    assert not validate_file(path).valid  # imports are rejected upstream
    assert validate_file(path, dialect="reharness").valid  # reharness allows `import re`
    native = load_patch(path, dialect="reharness")
    assert native.identity != load_patch(path).identity  # the dialect is part of what the patch does
    exported = native.to_harness_r1()
    assert exported["reharness_dialect"] == "reharness"
    assert Patch.from_dict(exported).dialect == "reharness"  # a round trip keeps reharness's view
