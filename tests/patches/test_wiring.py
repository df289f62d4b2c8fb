"""Patches wired into the runtime: sandboxed overlays in real episodes, and the patch CLI contracts."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from reharness.core.types import ChatRequest, ChatResponse
from reharness.envs import make_env
from reharness.patches import Patch, load_patch
from reharness.patches.overlay import PatchOverlay
from reharness.patches.sandbox.supervisor import SandboxLimits
from reharness.runtime import (
    Agent,
    EpisodeRunner,
    Harness,
    RandomAgent,
    RunSpec,
    SolverAgent,
    run_batch,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "patches"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reharness", *args], capture_output=True, text=True, timeout=120
    )


class SloppyHouseholdAgent(Agent):
    """Answers with a near-miss of the first admissible 'go to' command ('go to the cabinet 1' style); reads
    the admissible commands from the env, so it works whether or not the harness shows them."""

    policy_id = "sloppy"

    def __init__(self, env: Any = None) -> None:
        self.env = env

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return SloppyHouseholdAgent(env)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        admissible = self.env.admissible_actions() or []
        target = next((a for a in admissible if a.startswith("go to")), "look")
        return ChatResponse(text="Action: " + target.replace("go to ", "go to the "))


def test_snap_patch_rewrites_near_misses_in_the_sandbox() -> None:
    env = make_env("household", split="test")
    patch = load_patch(EXAMPLES / "household_snap_to_admissible.yaml")
    overlay = PatchOverlay(patch)
    harness = Harness.base("household").with_overlays(overlay)
    agent = SloppyHouseholdAgent()
    try:
        plain = asyncio.run(EpisodeRunner(env, agent, Harness.base("household")).run(env.get_task(0), seed=0))
        patched = asyncio.run(EpisodeRunner(env, agent, harness).run(env.get_task(0), seed=0))
    finally:
        asyncio.run(overlay.close())
    assert any("invalid_action" in s.flags for s in plain.steps)
    rewritten = [s for s in patched.steps if "rewritten" in s.flags]
    assert rewritten and all(s.action and s.action.startswith("go to ") for s in rewritten)
    assert not patched.steps[0].hook_errors
    assert sum("invalid_action" in s.flags for s in patched.steps) < sum(
        "invalid_action" in s.flags for s in plain.steps
    )


def test_hostile_patch_has_no_effect_and_episode_completes() -> None:
    patch = Patch(
        hooks={
            "before_action": "def hook(ctx, nb):\n    while True:\n        pass\n",
            "after_feedback": "def hook(ctx, nb):\n    return {'type': 'force_action'}\n",
        }
    )
    overlay = PatchOverlay(patch, SandboxLimits(call_timeout_s=0.2, max_failures=2))
    env = make_env("household", split="test")
    try:
        record = asyncio.run(
            EpisodeRunner(env, SolverAgent(), Harness.base("household").with_overlays(overlay)).run(
                env.get_task(1), seed=1
            )
        )
    finally:
        asyncio.run(overlay.close())
    assert record.success  # the solver still solves it: the hooks had no effect
    types = [e.error_type for s in record.steps for e in s.hook_errors]
    assert "timeout" in types and "invalid_effect" in types
    assert "disabled" in types  # the circuit breaker tripped after repeated timeouts


def test_patched_batch_is_deterministic(tmp_path: Path) -> None:
    patch = load_patch(EXAMPLES / "household_snap_to_admissible.yaml")
    spec = RunSpec(env="household", agent="random", n=4, seed=5, concurrency=2)
    digests = []
    for out in ("a", "b"):
        harness = Harness.base("household").with_overlays(PatchOverlay(patch, max_workers=2))
        digests.append(asyncio.run(run_batch(spec, RandomAgent(), harness, tmp_path / out)).digest)
    assert digests[0] == digests[1]


def test_patch_check_contract() -> None:
    good = cli("patch", "check", str(EXAMPLES / "shop_loop_breaker.json"), "--json")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout) == {"valid": True, "errors": [], "hooks": ["before_action"]}
    bad = cli("patch", "check", str(EXAMPLES / "invalid_match_escape.json"), "--json")
    assert bad.returncode == 1
    result = json.loads(bad.stdout)
    assert result["valid"] is False and result["errors"][0]["code"] == "forbidden_node"
    assert set(result["errors"][0]) == {"code", "line", "col", "message"} and result["errors"][0]["line"] > 0


def test_patch_try_contract(tmp_path: Path) -> None:
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps({"observation": "Nothing happens.", "admissible": ["look", "go to desk 1"]}))
    nb = tmp_path / "nb.json"
    nb.write_text(json.dumps({"seen": 1}))
    ok = cli(
        "patch",
        "try",
        str(EXAMPLES / "household_snap_to_admissible.yaml"),
        "--hook",
        "on_post_step",
        "--ctx",
        str(ctx),
        "--nb",
        str(nb),
        "--json",
    )
    assert ok.returncode == 0, ok.stderr
    result = json.loads(ok.stdout)
    assert set(result) == {"ok", "effect", "nb", "error"}
    assert result["ok"] is True and result["effect"]["kind"] == "hint" and result["nb"] == {"seen": 1}

    looping = tmp_path / "loop.json"
    looping.write_text(
        json.dumps(
            {
                "schema_version": "reharness-patch-v1",
                "hooks": {
                    "after_feedback": "def hook(ctx, nb):\n    x = 0\n    while True:\n        x += 1\n"
                },
            }
        )
    )
    slow = cli("patch", "try", str(looping), "--hook", "after_feedback", "--ctx", str(ctx), "--json")
    assert slow.returncode == 1
    assert json.loads(slow.stdout)["error"]["type"] == "timeout"

    escape = cli(
        "patch",
        "try",
        str(EXAMPLES / "invalid_match_escape.json"),
        "--hook",
        "before_decision",
        "--ctx",
        str(ctx),
        "--json",
        "--no-static-check",
    )
    result = json.loads(escape.stdout)
    assert result["ok"] is False or result["effect"] is None or "system" not in json.dumps(result)


def test_run_with_patch_flag(tmp_path: Path) -> None:
    proc = cli(
        "run",
        "--env",
        "household",
        "--agent",
        "solver",
        "--n",
        "3",
        "--out",
        str(tmp_path),
        "--patch",
        str(EXAMPLES / "household_snap_to_admissible.yaml"),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["success_rate"] == 1.0
    meta = json.loads((Path(result["out"]) / "run.json").read_text())
    assert meta["harness"]["overlays"][0]["points"] == ["after_feedback", "before_action"]
    bad = cli(
        "run",
        "--env",
        "household",
        "--agent",
        "solver",
        "--n",
        "1",
        "--out",
        str(tmp_path),
        "--patch",
        str(EXAMPLES / "invalid_match_escape.json"),
    )
    assert bad.returncode == 2 and "forbidden_node" in bad.stderr
