"""An r1-dialect patch file reaches a TextWorldExpress game through the CLI (`reharness run --patch`): the
file names the benchmark, the patch loads for that kit, its hook reads the ALFWorld-shaped ``ctx`` of the twx
adapter in real
episodes, and the export names the same benchmark again."""

from __future__ import annotations

import json
from pathlib import Path

from kit_cli import cli_json

from reharness.patches import load_patch

HOOK = """def hook(ctx, nb):
    options = list(ctx.get("admissible") or [])
    if not options:
        return None
    return {"kind": "inject_hint", "message": "Try: " + options[0]}
"""


def test_an_r1_patch_names_a_twx_game_and_runs_there(need_twx: None, tmp_path: Path) -> None:
    path = tmp_path / "twx_hint_r1.json"
    document = {
        "schema_version": "harness-r1-patch-v1",
        "benchmark": "twx-twc",
        "description": "name the first admissible command after every step",
        "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": HOOK}],
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    patch = load_patch(path)
    assert patch.env == "twx-twc" and patch.dialect == "r1"
    assert patch.to_harness_r1()["benchmark"] == "twx-twc"  # reads back as the same kit
    summary = cli_json(
        tmp_path, [], "run", "--env", "twx-twc", "--agent", "random", "--patch", str(path),
        "--split", "valid", "--n", "2", "--out", str(tmp_path / "runs"),
    )  # fmt: skip
    episodes = [json.loads(line) for line in Path(summary["out"], "episodes.jsonl").read_text().splitlines()]
    steps = [s for e in episodes for s in e["steps"]]
    hints = [
        x["text"]
        for s in steps
        for x in s["effects"]
        if x["kind"] == "hint" and x["overlay"].startswith("patch")
    ]
    assert len(hints) == len(steps) - len(episodes)  # after every step but the last of each episode
    assert all(h.startswith("Try: ") for h in hints)  # it read ctx["admissible"]
    assert not any(s["hook_errors"] for s in steps)
