"""``reharness patch convert``: faithful translations between the dialects, clear errors otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from r1_helpers import run_episode
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.patches.model import Patch, load_patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.r1.convert import ConversionError, convert_patch

NATIVE_HINT = """import re


def hook(ctx, nb):
    if not re.search("nothing happens", str(ctx.get("observation") or "").lower()):
        return None
    options = [a for a in ctx["admissible"] or [] if a.startswith("go to")][:3]
    return {"type": "hint", "message": "Nothing happened; try: " + "; ".join(options)}
"""
NATIVE_BLOCK = """def hook(ctx, nb):
    n = nb.get("n", 0)
    nb["n"] = n + 1
    if n == 1:
        return {"type": "block", "message": "Re-read the room description first."}
    return None
"""


def native() -> Patch:
    return Patch({"after_feedback": NATIVE_HINT, "before_action": NATIVE_BLOCK}, "hints", "household")


def effects(record: object) -> list[tuple[int, str, str]]:
    return [(s.index, e["kind"], e.get("text", "")) for s in record.steps for e in s.effects]  # type: ignore[attr-defined]


def test_native_to_r1_and_back_is_faithful() -> None:
    patch = native()
    r1 = convert_patch(patch, "r1")
    assert r1.dialect == "r1" and "import re" not in r1.hooks["after_feedback"]
    assert (
        "'kind': 'inject_hint'" in r1.hooks["after_feedback"]
        and "'kind': 'block_and_prompt'" in r1.hooks["before_action"]
    )
    back = convert_patch(r1, "reharness")
    assert back.dialect == "reharness" and back.hooks["after_feedback"].startswith("import re\n")
    runs = [run_episode("household", [PatchOverlay(p)], task=3) for p in (patch, r1, back)]
    assert effects(runs[0]) and effects(runs[0]) == effects(runs[1]) == effects(runs[2])
    assert [s.action for s in runs[0].steps] == [s.action for s in runs[1].steps]


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        ("def hook(ctx, nb):\n    return {'type': 'hint', 'message': str(ctx.counters)}\n", "ctx.counters"),
        ("import json\ndef hook(ctx, nb):\n    return None\n", "`import json`"),
        ("def hook(ctx, nb):\n    k = 'hint'\n    return {'type': k, 'message': 'm'}\n", "computed"),
        (
            "def hook(ctx, nb):\n    return {'type': 'hint', 'message': str(len(ctx))}\n",
            "ctx is used as a whole",
        ),
        ("def hook(ctx, nb):\n    return {'type': 'hint', 'message': str(ctx.step)}\n", "ctx.step"),
    ],
)
def test_untranslatable_parts_are_named(code: str, needle: str) -> None:
    with pytest.raises(ConversionError) as caught:
        convert_patch(Patch({"after_feedback": code}, "d", "household"), "r1")
    assert needle in caught.value.message


def test_cli_convert(tmp_path: Path) -> None:
    source = tmp_path / "native.json"
    native().dump(source)
    out = tmp_path / "official.json"
    result = CliRunner().invoke(app, ["patch", "convert", str(source), "--to", "r1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == "harness-r1-patch-v1" and doc["benchmark"] == "alfworld"
    assert "reharness_dialect" not in doc and load_patch(out).dialect == "r1"
    shown = CliRunner().invoke(app, ["patch", "convert", str(out), "--to", "reharness"])
    assert shown.exit_code == 0 and json.loads(shown.output)["schema_version"] == "reharness-patch-v1"
    failed = CliRunner().invoke(
        app, ["patch", "convert", "examples/patches/shop_loop_breaker.json", "--to", "r1"]
    )
    assert failed.exit_code != 0 and "ctx.action" in failed.output


def test_cli_check_and_try_in_the_r1_dialect(tmp_path: Path) -> None:
    code = "def hook(ctx, nb):\n    return {'kind': 'rewrite_action', 'action': '  Buy Now '}\n"
    doc = {"schema_version": "reharness-patch-v1", "env": "shop", "hooks": {"on_before_action": code}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps({"action": {"tool": "click_action"}}))
    native = CliRunner().invoke(app, ["patch", "check", str(path), "--json"])
    assert native.exit_code == 0  # reharness's view: a valid patch (its effect would be rejected at run time)
    checked = CliRunner().invoke(app, ["patch", "check", str(path), "--dialect", "r1", "--json"])
    assert checked.exit_code == 0 and json.loads(checked.output)["valid"]
    tried = CliRunner().invoke(
        app,
        [
            "patch",
            "try",
            str(path),
            "--dialect",
            "r1",
            "--hook",
            "on_before_action",
            "--ctx",
            str(ctx),
            "--json",
        ],
    )
    assert tried.exit_code == 0, tried.output
    assert json.loads(tried.output)["effect"] == {"kind": "rewrite_action", "action": "buy now"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc | {"hooks": {"on_before_action": "import re\n" + code}}))
    rejected = CliRunner().invoke(app, ["patch", "check", str(bad), "--dialect", "r1", "--json"])
    assert rejected.exit_code == 1 and json.loads(rejected.output)["errors"][0]["code"] == "module_level_work"


def test_cli_run_with_an_official_patch(tmp_path: Path) -> None:
    """``--dialect r1`` makes ``run`` read the hooks in Harness-R1's view: the official return shape acts."""
    code = "def hook(ctx, nb):\n    return {'kind': 'inject_hint', 'message': 'after ' + ctx.action.final_action}\n"  # noqa: E501
    doc = {"schema_version": "reharness-patch-v1", "env": "household", "hooks": {"on_post_step": code}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))

    def run(out: str, *extra: str) -> list[dict[str, object]]:
        args = ["run", "--env", "household", "--agent", "solver", "--n", "2", "--patch", str(path)]
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / out), "--json", *extra])
        assert result.exit_code == 0, result.output
        lines = [line for p in (tmp_path / out).rglob("*.jsonl") for line in p.read_text().splitlines()]
        return [step for line in lines for step in json.loads(line)["steps"]]

    native, official = run("native"), run("official", "--dialect", "r1")
    live = [s for s in native if not s["terminated"]]
    assert live and all("AttributeError" in s["hook_errors"][0]["message"] for s in live)  # no ctx.action
    assert not any(s["effects"] for s in native)
    assert all(s["effects"][0]["text"] == "after " + s["action"] for s in official if not s["terminated"])
    assert not any(s["hook_errors"] for s in official)
    ended = [s for s in official if s["terminated"]]
    assert ended and all(s["dropped_effects"][0]["reason"] == "the episode ended" for s in ended)


def test_cli_run_refuses_an_r1_patch_for_another_benchmark(tmp_path: Path) -> None:
    args = ["run", "--env", "shop", "--agent", "solver", "--n", "1", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--patch", "examples/patches/household_nothing_happens_r1.json"])
    assert result.exit_code != 0 and "--env household" in result.output


def test_a_repeated_r1_hook_is_not_translatable() -> None:
    code = "def hook(ctx, nb):\n    return None\n"
    doc = {
        "schema_version": "harness-r1-patch-v1",
        "benchmark": "webshop",
        "description": "d",
        "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": code}] * 2,
    }
    with pytest.raises(ConversionError) as caught:
        convert_patch(Patch.from_dict(doc), "reharness")
    assert "2 code blocks" in caught.value.message
