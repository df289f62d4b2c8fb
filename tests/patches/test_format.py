"""The patch format: loading (JSON/YAML, both schemas), identity, Harness-R1 import/export, replies."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from reharness.patches import (
    HARNESS_R1_SCHEMA,
    SCHEMA_VERSION,
    Patch,
    PatchFormatError,
    extract_patch,
    load_patch,
    patch_from_text,
    validate_file,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "patches"
HOOK = "def hook(ctx, nb):\n    return None\n"
HINT = 'def hook(ctx, nb):\n    return {"type": "inject_hint", "message": "look around"}\n'


def doc(**fields: object) -> dict[str, object]:
    return {
        "schema_version": SCHEMA_VERSION,
        "description": "d",
        "env": "shop",
        "hooks": {"on_init": HOOK},
    } | fields


def format_code(data: object) -> str:
    with pytest.raises(PatchFormatError) as caught:
        Patch.from_dict(data, source="p.json")
    assert "p.json" in caught.value.message and caught.value.hint  # names the source and says how to fix
    return caught.value.code


# --- loading ------------------------------------------------------------------------------------------------
def test_json_and_yaml_examples_load_with_canonical_hook_points() -> None:
    shop = load_patch(EXAMPLES / "shop_loop_breaker.json")
    assert shop.env == "shop" and shop.points == ("before_action",)
    household = load_patch(EXAMPLES / "household_snap_to_admissible.yaml")
    assert household.env == "household" and household.points == ("before_action", "after_feedback")
    assert household.hooks["before_action"].startswith("import difflib\n")
    assert household.metadata["repair_direction"] == "action_validity"


def test_yaml_and_json_of_the_same_patch_have_one_identity(tmp_path: Path) -> None:
    patch = load_patch(EXAMPLES / "household_snap_to_admissible.yaml")
    as_json = load_patch(patch.dump(tmp_path / "p.json"))
    as_yaml = load_patch(patch.dump(tmp_path / "p.yml"))
    assert as_json == patch == as_yaml and as_json.identity == as_yaml.identity == patch.identity
    assert "before_action: |" in (tmp_path / "p.yml").read_text()  # code in literal block style
    assert json.loads((tmp_path / "p.json").read_text())["schema_version"] == SCHEMA_VERSION
    # content, not the suffix, decides the parser
    (tmp_path / "yaml_in_disguise.json").write_text(patch.to_yaml())
    assert load_patch(tmp_path / "yaml_in_disguise.json") == patch


def test_harness_r1_hook_names_map_to_reharness_points_in_lifecycle_order() -> None:
    patch = Patch({"on_post_step": HINT, "make_pre_hint": HOOK, "on_before_action": HOOK, "on_init": HOOK})
    assert patch.points == ("on_init", "before_decision", "before_action", "after_feedback")
    assert patch == Patch(
        {"after_feedback": HINT, "before_decision": HOOK, "before_action": HOOK, "on_init": HOOK}
    )


# --- identity -----------------------------------------------------------------------------------------------
def test_identity_covers_content_but_not_metadata_or_cosmetic_whitespace() -> None:
    base = Patch({"before_action": HOOK}, description="Snap actions.", env="household")
    assert len(base.identity) == 16
    assert (
        base.identity == Patch({"before_action": HOOK}, description="Snap actions.", env="household").identity
    )
    # metadata records provenance: same identity, but not an equal object
    tagged = base.with_metadata(engineer="teacher", packet="p1")
    assert tagged.identity == base.identity and tagged != base and hash(tagged) == hash(base)
    # re-wrapping the description or trailing newlines/CRLF in code keep the identity
    assert (
        Patch({"before_action": HOOK}, description="  Snap\n   actions. ", env="household").identity
        == base.identity
    )
    assert (
        Patch({"before_action": HOOK.rstrip() + "\n\n\n"}, "Snap actions.", "household").identity
        == base.identity
    )
    assert (
        Patch({"before_action": HOOK.replace("\n", "\r\n")}, "Snap actions.", "household").identity
        == base.identity
    )
    # words of the description, code, env and hook point all change it
    changed = [
        Patch({"before_action": HOOK}, description="Snap the actions.", env="household"),
        Patch({"before_action": HOOK.replace("None", "{}")}, description="Snap actions.", env="household"),
        Patch({"before_action": HOOK.replace("    ", "  ")}, description="Snap actions.", env="household"),
        Patch({"before_action": HOOK}, description="Snap actions.", env="shop"),
        Patch({"after_feedback": HOOK}, description="Snap actions.", env="household"),
    ]
    assert len({base.identity, *(p.identity for p in changed)}) == 1 + len(changed)


@pytest.mark.parametrize(
    "code",
    [
        "def hook(ctx, nb):\n\treturn None  \n",
        'def hook(ctx, nb):\n    return "\u00e9 \u2603 \\n"\n',
        '  # indented comment\ndef hook(ctx, nb):\n    x = """a\n  b"""\n    return x\n',
        "",
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_dump_and_load_round_trip_tricky_code(tmp_path: Path, code: str, suffix: str) -> None:
    patch = Patch({"on_init": code}, description="a: b # c\n- d", metadata={"k": [1, "x", None]})
    assert load_patch(patch.dump(tmp_path / f"p{suffix}")) == patch


def test_patch_is_frozen_and_detached_from_inputs() -> None:
    hooks = {"on_init": HOOK}
    meta = {"tags": ["a"]}
    patch = Patch(hooks, metadata=meta)
    hooks["on_init"] = "changed"
    meta["tags"].append("b")
    assert patch.hooks["on_init"] == HOOK and patch.metadata == {"tags": ["a"]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        patch.env = "db"  # type: ignore[misc]
    assert {patch, Patch({"on_init": HOOK}, metadata={"tags": ["a"]})} == {patch}


# --- format errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "code"),
    [
        ([1, 2], "wrong_schema"),
        ({"hooks": {}}, "wrong_schema"),
        (doc(schema_version="reharness-patch-v2"), "wrong_schema"),
        (doc(hoks={}), "unknown_field"),
        ({"schema_version": SCHEMA_VERSION}, "missing_field"),
        (doc(hooks=["def hook(ctx, nb): pass"]), "bad_field"),
        (doc(hooks={"on_init": 3}), "bad_field"),
        (doc(hooks={"on_step": HOOK}), "unknown_hook"),
        (doc(hooks={"on_post_step": HOOK, "after_feedback": HOOK}), "duplicate_hook"),
        (doc(env="kitchen"), "unknown_env"),
        (doc(description=["x"]), "bad_field"),
        (doc(description="x" * 5000), "bad_field"),
        (doc(metadata={"x": float("nan")}), "bad_field"),
        (doc(metadata={"x": {1, 2}}), "bad_field"),
        (doc(metadata="author"), "bad_field"),
    ],
)
def test_format_errors_have_stable_codes(data: object, code: str) -> None:
    assert format_code(data) == code


def test_format_error_names_field_and_fix() -> None:
    with pytest.raises(PatchFormatError) as caught:
        Patch.from_dict(doc(hoks={}), source="my/patch.yaml")
    assert (
        "my/patch.yaml" in str(caught.value)
        and "'hoks'" in str(caught.value)
        and "hooks" in str(caught.value.hint)
    )
    with pytest.raises(PatchFormatError) as caught:
        Patch.from_dict(doc(hooks={"on_step": HOOK}), source="x.json")
    assert "hooks.on_step" in caught.value.message and "before_action" in str(caught.value.hint)
    assert Patch.from_dict(doc(env="webshop")).env == "shop"  # R1 benchmark names are accepted as env


@pytest.mark.parametrize(
    ("text", "code", "fragment"),
    [
        ('{"schema_version": "reharness-patch-v1", "hooks": {,}}', "invalid_json", "line 1 column 52"),
        ('{"schema_version": "reharness-patch-v1",\n "hooks": {}, "x": NaN}', "invalid_json", "NaN"),
        ('{"schema_version": "reharness-patch-v1", "hooks": {}, "hooks": {}}', "duplicate_key", "twice"),
        (
            '{"schema_version": "reharness-patch-v1", "hooks": {"on_init": "", "on_init": ""}}',
            "duplicate_hook",
            "",
        ),
        ("schema_version: reharness-patch-v1\nhooks: [\n", "invalid_yaml", "line 3"),
        ("schema_version: reharness-patch-v1\nhooks: {}\nhooks: {}\n", "duplicate_key", ""),
        ("a: &x [1]\nb: *x\n", "invalid_yaml", "aliases"),
        ("[" * 100_000 + "]" * 100_000, "invalid_yaml", ""),
        ('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid_json", "deeply"),
    ],
)
def test_document_errors(text: str, code: str, fragment: str) -> None:
    started = time.perf_counter()
    with pytest.raises(PatchFormatError) as caught:
        patch_from_text(text, source="doc")
    assert time.perf_counter() - started < 2.0
    assert caught.value.code == code and fragment in caught.value.message


def test_file_errors(tmp_path: Path) -> None:
    cases = {
        "missing.json": (None, "not_found"),
        "latin1.json": (b'{"description": "caf\xe9"}', "invalid_utf8"),
        "huge.json": (b'{"description": "' + b"x" * (2 << 20) + b'"}', "too_large"),
    }
    for name, (content, code) in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        with pytest.raises(PatchFormatError) as caught:
            load_patch(tmp_path / name)
        assert caught.value.code == code and name in caught.value.message
    report = validate_file(tmp_path / "latin1.json")
    assert report.to_dict() == {
        "valid": False,
        "errors": [{"code": "invalid_utf8", "line": 0, "col": 0, "message": report.errors[0].message}],
        "hooks": [],
    }
    good = validate_file(EXAMPLES / "household_snap_to_admissible.yaml")
    assert good.to_dict() == {"valid": True, "errors": [], "hooks": ["before_action", "after_feedback"]}
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc()).encode())
    assert load_patch(bom).env == "shop"


# --- Harness-R1 import / export -----------------------------------------------------------------------------
def test_harness_r1_import_example() -> None:
    patch = load_patch(EXAMPLES / "household_nothing_happens_r1.json")
    assert patch.env == "household" and patch.points == ("after_feedback",)
    assert patch.metadata == {"imported_from": HARNESS_R1_SCHEMA}
    assert validate_file(EXAMPLES / "household_nothing_happens_r1.json").valid


def test_harness_r1_round_trip() -> None:
    patch = Patch(
        {"on_init": HOOK, "before_decision": HOOK, "before_action": HOOK, "after_feedback": HINT}, "d", "db"
    )
    exported = patch.to_harness_r1()
    assert exported["schema_version"] == HARNESS_R1_SCHEMA and exported["benchmark"] == "dbbench"
    assert [a["hook"] for a in exported["actions"]] == [
        "on_init",
        "make_pre_hint",
        "on_before_action",
        "on_post_step",
    ]
    assert {a["type"] for a in exported["actions"]} == {"add_code_hook"}
    imported = Patch.from_dict(json.loads(json.dumps(exported)))
    assert imported.identity == patch.identity and imported.hooks == patch.hooks
    assert imported.to_harness_r1() == exported
    for benchmark, env in (("webshop", "shop"), ("alfworld", "household"), ("dbbench", "db")):
        assert Patch.from_dict(exported | {"benchmark": benchmark}).env == env
    with pytest.raises(PatchFormatError) as caught:
        Patch({"on_init": HOOK}).to_harness_r1()
    assert caught.value.code == "bad_field" and "env" in caught.value.message


def r1(*actions: dict[str, object], **fields: object) -> dict[str, object]:
    base = {
        "schema_version": HARNESS_R1_SCHEMA,
        "benchmark": "alfworld",
        "description": "d",
        "actions": list(actions),
    }
    return base | fields


def act(hook: str = "on_post_step", **fields: object) -> dict[str, object]:
    return {"type": "add_code_hook", "hook": hook, "code": HOOK} | fields


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (r1(*[act()] * 13), "too_many_actions"),
        (r1(act(type="add_rule")), "unsupported_action"),
        (r1({"type": "block_action", "pattern": "x"}), "unsupported_action"),
        (r1(act(), act(), reharness_dialect="reharness"), "duplicate_hook"),
        (r1(act(), act("after_feedback"), reharness_dialect="reharness"), "duplicate_hook"),
        (r1(act("after_feedback")), "unknown_hook"),  # the r1 dialect takes the official names only
        (r1(), "empty_patch"),
        (r1(act(), benchmark=None), "missing_field"),
        (r1(act("on_step")), "unknown_hook"),
        (r1(act(code=None)), "bad_field"),
        (r1("add_code_hook"), "bad_field"),
        (r1(actions="x"), "bad_field"),
        ({"schema_version": HARNESS_R1_SCHEMA}, "missing_field"),
        (r1(act(), benchmark="swebench"), "unknown_env"),
    ],
)
def test_harness_r1_import_errors(data: object, code: str) -> None:
    assert format_code(data) == code


def test_harness_r1_import_keeps_unknown_fields_in_metadata() -> None:
    patch = Patch.from_dict(r1(act(rationale="why"), act("on_init"), notes="n"))
    assert patch.points == ("on_init", "after_feedback")
    assert patch.metadata["harness_r1"] == {
        "extra": {"notes": "n"},
        "action_extra": [{"index": 0, "rationale": "why"}],
    }
    # in the reharness dialect an empty patch is well-formed; validation rejects it
    assert Patch.from_dict(r1(reharness_dialect="reharness")).hooks == {}


# --- extraction from replies --------------------------------------------------------------------------------
PATCH_JSON = json.dumps(doc(hooks={"on_post_step": HINT}))


@pytest.mark.parametrize(
    "reply",
    [
        f"<think>the agent loops</think>\n<patch>{PATCH_JSON}</patch>",
        f"<think>x</think><patch>\n```json\n{PATCH_JSON}\n```\n</patch>",
        f"<patch>{PATCH_JSON}</patch>",
        f"<THINK>draft: <patch>{{}}</patch></THINK> final:\n<Patch>{PATCH_JSON}</Patch> done",
        f"<think>a</think><patch>{{not json}}</patch> then corrected <patch>{PATCH_JSON}</patch>",
    ],
)
def test_extract_patch(reply: str) -> None:
    patch = extract_patch(reply)
    assert patch.points == ("after_feedback",) and patch.env == "shop"
    assert patch.identity == Patch.from_dict(json.loads(PATCH_JSON)).identity


def test_extract_harness_r1_patch() -> None:
    reply = f"<think>t</think><patch>{json.dumps(r1(act()))}</patch>"
    assert extract_patch(reply).points == ("after_feedback",)


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("I would add a hint.", "no_patch_tag"),
        (f"<think>maybe <patch>{PATCH_JSON}</patch></think> no answer", "no_patch_tag"),
        (f"<think>t</think><patch>{PATCH_JSON[:40]}", "unterminated_patch_tag"),
        (f"<think>still thinking <patch>{PATCH_JSON}</patch>", "unterminated_think"),
        ("<think>t</think><patch>{'schema_version': 1}</patch>", "invalid_json"),
        ("<think>t</think><patch>  </patch>", "invalid_json"),
        ('<patch>{"schema_version": "v9", "hooks": {}}</patch>', "wrong_schema"),
        ('<patch>{"hooks": {}}</patch>', "wrong_schema"),
        ("<patch>[1, 2]</patch>", "wrong_schema"),
        ('<patch>{"schema_version": "reharness-patch-v1", "hooks": {"on_step": ""}}</patch>', "unknown_hook"),
    ],
)
def test_extract_patch_errors(reply: str, code: str) -> None:
    with pytest.raises(PatchFormatError) as caught:
        extract_patch(reply)
    assert caught.value.code == code and "<reply>" in caught.value.message and caught.value.hint
