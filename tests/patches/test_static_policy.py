"""Policy, leakage and patch-level checks of static validation, and realistic patches that must pass.

The realistic patches are also executed with exactly the builtins and modules the policy allows (as the
sandbox worker will), to show the allow-lists are enough for real hooks.
"""

from __future__ import annotations

import builtins
import importlib
import types
from pathlib import Path
from typing import Any

import pytest

from reharness.patches import (
    ALLOWED_MODULES,
    SAFE_BUILTINS,
    LeakageEvidence,
    Patch,
    PatchValidationError,
    ValidationLimits,
    check_patch,
    load_patch,
    validate_hook_source,
    validate_patch,
)
from reharness.patches.policy import FORBIDDEN_ATTRIBUTES, FORBIDDEN_NAMES
from reharness.runtime.effects import parse_effect
from reharness.runtime.view import ReadOnlyView

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "patches"


def hook_with(body: str, prefix: str = "") -> str:
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"{prefix}def hook(ctx, nb):\n{lines}\n"


def codes(source: str, **kwargs: Any) -> list[tuple[str, int, int]]:
    return [(e.rule, e.line, e.col) for e in validate_hook_source(source, **kwargs)]


# --- reachability: what L1 lets through cannot reach sys/os/builtins via allowed modules --------------------
def test_allowed_modules_do_not_reach_dangerous_modules_through_allowed_attributes() -> None:
    dangerous = {"sys", "os", "posix", "builtins", "importlib", "subprocess", "io", "ctypes", "gc", "types"}
    dangerous |= {"inspect", "marshal", "pickle", "codecs", "shutil", "socket", "signal", "operator"}
    frontier: list[tuple[str, Any]] = [(name, importlib.import_module(name)) for name in ALLOWED_MODULES]
    seen: set[int] = set()
    for _depth in range(4):
        following: list[tuple[str, Any]] = []
        for path, obj in frontier:
            for attr in dir(obj):
                if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES:
                    continue
                try:
                    value = getattr(obj, attr)
                except Exception:
                    continue
                if isinstance(value, types.ModuleType):
                    assert value.__name__.split(".")[0] not in dangerous, f"{path}.{attr} -> {value.__name__}"
                    if id(value) not in seen:
                        seen.add(id(value))
                        following.append((f"{path}.{attr}", value))
        frontier = following


def test_policy_constants() -> None:
    assert "operator" not in ALLOWED_MODULES and "os" not in ALLOWED_MODULES
    for name in ALLOWED_MODULES:
        importlib.import_module(name)
    assert 25 <= len(SAFE_BUILTINS) <= 40 and len(set(SAFE_BUILTINS)) == len(SAFE_BUILTINS)
    assert all(hasattr(builtins, name) for name in SAFE_BUILTINS)
    assert not set(SAFE_BUILTINS) & FORBIDDEN_NAMES
    with pytest.raises(ValueError, match="max_nodes"):
        ValidationLimits(max_nodes=-1)


# --- leakage ------------------------------------------------------------------------------------------------
EVIDENCE = LeakageEvidence(
    task_ids=["household/train/021135"],
    answers=["portugal", "42.5", "no"],
    object_instances=["mug 1", "cabinet 3"],
)


@pytest.mark.parametrize(
    ("expression", "col"),
    [("'household/train/021135'", 12), ("'Answer Portugal now'", 12), ("42.5", 12), ("'take mug 1'", 12)]
    + [("'go to cabinet 12'", 12), ("f'open {ctx} cabinet 7'", 12)],  # 3.11: f-string parts at its start
)
def test_leakage_rejected(expression: str, col: int) -> None:
    assert codes(hook_with(f"return {expression}"), evidence=EVIDENCE)[0] == ("leakage", 2, col)


@pytest.mark.parametrize(
    "expression", ["'portugalese'", "'no'", "'after 3 tries'", "'take mugs'", "42", "'go'"]
)
def test_leakage_not_flagged(expression: str) -> None:
    assert codes(hook_with(f"return {expression}"), evidence=EVIDENCE) == []


def test_leakage_strict_mode_and_messages() -> None:
    strict = LeakageEvidence(any_numbered_instance=True)
    assert codes(hook_with("return 'after 3 tries'"), evidence=strict)[0] == ("leakage", 2, 12)
    message = validate_hook_source(hook_with("return 'take mug 1'"), evidence=EVIDENCE)[0].message
    assert "mug 1" in message and "general failure mode" in message
    patch = Patch({"on_init": hook_with("return {'skills': ['portugal']}")})
    assert [e.rule for e in validate_patch(patch, evidence=EVIDENCE)] == ["leakage"]
    assert validate_patch(patch) == []
    with pytest.raises(TypeError):
        LeakageEvidence(task_ids="household/train/1")


# --- patch-level checks -------------------------------------------------------------------------------------
def test_patch_level_limits_and_check_patch() -> None:
    assert [e.rule for e in validate_patch(Patch({}))] == ["empty_patch"]
    big = "# " + "x" * 7_000 + "\n" + hook_with("return None")
    patch = Patch({"on_init": big, "before_decision": big, "before_action": big})
    assert [(e.rule, e.line, e.col) for e in validate_patch(patch)] == [("too_large", 0, 0)]
    bad = Patch({"before_action": hook_with("return eval('1')"), "after_feedback": "import os\n"})
    errors = validate_patch(bad)
    assert [(e.hook, e.rule) for e in errors] == [
        ("before_action", "forbidden_name"),
        ("after_feedback", "missing_hook"),
        ("after_feedback", "forbidden_import"),
    ]
    with pytest.raises(PatchValidationError) as caught:
        check_patch(bad)
    assert caught.value.rule == "forbidden_name" and caught.value.hook == "before_action"
    assert caught.value.to_dict() == {**errors[0].to_dict()}


# --- realistic patches pass, and run with exactly the allowed builtins/modules ------------------------------
REALISTIC = {
    "before_action": """
import difflib

def hook(ctx, nb):
    text = ((ctx["action"] or {}).get("text") or "").strip().lower()
    admissible = list(ctx.get("admissible") or [])
    if not text or not admissible or text in admissible:
        return None
    close = difflib.get_close_matches(text, admissible, n=1, cutoff=0.6)
    return {"type": "rewrite_action", "action": close[0]} if close else None
""",
    "after_feedback": """
import re
from collections import Counter

LIMIT = 3

def signature(text):
    return re.sub(r"\\d+", "#", str(text or "").lower())

def hook(ctx, nb):
    counts = nb.setdefault("seen", {})
    key = signature(ctx.get("observation"))
    counts[key] = counts.get(key, 0) + 1
    try:
        common = Counter(counts).most_common(1)[0][1]
    except Exception as exc:
        nb["error"] = str(exc)
        return None
    if common >= LIMIT:
        return {"type": "inject_hint", "message": f"You have seen this {common} times; change strategy."}
    return None
""",
}


def run_hook(code: str, ctx: dict[str, Any], nb: dict[str, Any]) -> Any:
    """Run trusted example code the way the sandbox worker will: restricted builtins and imports only."""

    def restricted_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ):
        assert name in ALLOWED_MODULES and level == 0
        return importlib.import_module(name)

    safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS} | {"__import__": restricted_import}
    namespace: dict[str, Any] = {"__builtins__": safe}
    exec(compile(code, "<patch>", "exec", dont_inherit=True), namespace)
    return namespace["hook"](ReadOnlyView(ctx), nb)


def test_realistic_inline_patch_passes_and_runs() -> None:
    patch = check_patch(Patch(REALISTIC, description="snap and loop hint", env="household"))
    ctx = {
        "action": {"text": "go to cabinet1"},
        "admissible": ["go to cabinet 1", "look"],
        "observation": "x",
    }
    assert run_hook(patch.hooks["before_action"], ctx, {}) == {
        "type": "rewrite_action",
        "action": "go to cabinet 1",
    }
    nb: dict[str, Any] = {}
    results = [run_hook(patch.hooks["after_feedback"], {"observation": f"Nothing {i}"}, nb) for i in range(3)]
    assert results[:2] == [None, None] and parse_effect("after_feedback", results[2]).kind == "hint"


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in EXAMPLES.iterdir()
        if p.suffix in (".json", ".yaml", ".yml") and not p.name.startswith("invalid")
    ),
)
def test_example_patches_are_valid_and_return_valid_effects(name: str) -> None:
    patch = check_patch(load_patch(EXAMPLES / name))
    if patch.dialect == "r1":  # written against Harness-R1's ctx: run it as the r1 runtime would
        from reharness.patches.sandbox.supervisor import HookWorker, SandboxLimits
        from reharness.runtime.r1.normalise import normalise

        r1_ctx = {
            "observation": "Nothing happens.",
            "admissible": ["go to cabinet 1", "open cabinet 1", "look"],
            "action": {"normalized": "open the cabinet 1"},
        }
        with HookWorker(dict(patch.hooks), SandboxLimits(dialect="r1")) as worker:
            value = worker.call("after_feedback", r1_ctx, {}).value
        assert normalise("on_post_step", value, r1_ctx["admissible"]) == {
            "kind": "inject_hint",
            "message": "Try one of: go to cabinet 1; open cabinet 1",
        }
        return
    ctx = {
        "observation": "Nothing happens.",
        "admissible": ["go to cabinet 1", "open cabinet 1", "look"],
        "action": {"text": "open the cabinet 1"},
        "counters": {"last_action": "open cabinet"},
        "state": {"last_error_kind": "no_such_column", "error_streak": 2},
        "task": {},
    }
    nb: dict[str, Any] = {}
    for point, code in patch.hooks.items():
        for _ in range(3):
            effect = parse_effect(point, run_hook(code, ctx, nb))
            assert effect is None or effect.kind in {
                "rewrite",
                "hint",
                "block",
                "message",
                "context",
                "force",
            }
