"""``reharness improve`` interrupted and resumed: the same files as one uninterrupted invocation.

Killed (SIGKILL) part-way three times: the target is the clumsy expert (``test_paired``), slowed
down per model call so that each kill lands inside a batch — the round's baseline, a candidate's paired
rerun, the held-out baseline. The resumed invocation must report the same decisions *and the same costs*
(model calls made and reused, per batch) in ``result.json``, ``candidates.json`` / ``.csv`` and
``report.md`` as an uninterrupted invocation.

Stopped by its candidate timeout: the candidate's finished episodes stay, and the same invocation with a
larger limit asks the model only for the rest.

Stopped by a model server that fails every request: the loop stops after the baseline (no valid reply), a
plain rerun keeps the failed episodes, and ``retry_errors`` reruns them into the same result as a clean run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from clumsy import SPEC, ClumsySolver, hook_patch
from test_improve_cli import FixedEngineer, config

from reharness.core.errors import NoValidReplyError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.engineer.improve import improve
from reharness.runtime.agents import Agent
from reharness.store.run_store import RunStore

HERE = Path(__file__).resolve().parents[1]  # tests/: clumsy.py
LAUNCH = """
import os, sys
sys.path.insert(0, sys.argv.pop(1))
from clumsy import ClumsySolver
from reharness.runtime.agents import SCRIPTED_AGENTS

SCRIPTED_AGENTS["clumsy"] = lambda: ClumsySolver(delay=float(os.environ["CALL_DELAY"]))
from reharness.cli.main import app
app(prog_name="reharness")
"""
FILES = ("result.json", "candidates.json", "candidates.csv", "report.md")


def command(out: Path) -> list[str]:
    return [
        sys.executable, "-c", LAUNCH, str(HERE), "improve", "--env", SPEC.env, "--agent", "clumsy",
        "--engineer", "operators", "--batch-size", "6", "--k", "2", "--eval-n", "6", "--max-steps", "12",
        "--concurrency", "2", "--out", str(out), "--json",
    ]  # fmt: skip


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def kill_when(out: Path, ready: Callable[[], Path | None]) -> int:
    """Start improve (slow calls), SIGKILL it once ``ready()`` names a batch; return that batch's size."""
    proc = subprocess.Popen(command(out), env=os.environ | {"CALL_DELAY": "0.05"}, stdout=subprocess.DEVNULL)
    deadline, found = time.time() + 120, None
    while time.time() < deadline and proc.poll() is None and found is None:
        found = ready()
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert found is not None, "improve finished or stalled before the batch started"
    return lines(found)


def partial(pattern: str, out: Path, skip: int = 0) -> Callable[[], Path | None]:
    """The first batch under ``out/runs/pattern`` (least recently written first, after ``skip``) with 2+
    episodes."""

    def ready() -> Path | None:
        found = sorted((out / "runs").glob(pattern), key=lambda p: p.stat().st_mtime)[skip:]
        return next((p for p in found if lines(p) >= 2), None)

    return ready


def outputs(out: Path) -> dict[str, str]:
    return {name: (out / name).read_text().replace(str(out), "OUT") for name in FILES}


def test_killed_and_resumed_improve_reports_the_same_costs(tmp_path: Path) -> None:
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    done = subprocess.run(
        command(whole), env=os.environ | {"CALL_DELAY": "0"}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    # three kills: inside the round's baseline, a candidate's paired rerun, then the held-out baseline
    assert kill_when(resumed, partial("baselines/*/*/episodes.jsonl", resumed)) < 6
    assert kill_when(resumed, partial("paired/*/episodes.jsonl", resumed)) < 6
    assert kill_when(resumed, partial("baselines/*/*/episodes.jsonl", resumed, skip=1)) < 6
    assert not (resumed / "result.json").exists()
    finished = subprocess.run(
        command(resumed), env=os.environ | {"CALL_DELAY": "0"}, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout) == json.loads(done.stdout.replace(str(whole), str(resumed)))
    expected, got = outputs(whole), outputs(resumed)
    assert got == expected
    result = json.loads(got["result.json"])
    assert result["rounds"][0]["baseline_model_calls"] > 0 and result["stack"]
    assert all(c["model_calls"] > 0 and c["reused_calls"] > 0 for c in result["candidates"])
    assert result["heldout"]["cost"]["episodes"] == 6 and result["heldout"]["cost"]["model_calls"] > 0


class FlakyClumsy(ClumsySolver):
    """The clumsy expert behind a server that is down while ``down[0]`` is true (every request fails)."""

    def __init__(self, env: Any = None, protocol: str = "text", down: list[bool] | None = None) -> None:
        super().__init__(env, protocol)
        self.down = down if down is not None else [False]

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return FlakyClumsy(env, protocol, self.down)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self.down[0]:
            return ChatResponse(
                error="HTTP 503 from http://model/v1/chat/completions: overloaded", attempts=3
            )
        return await super().complete(request)


async def test_a_dead_server_stops_improve_and_retry_errors_recovers(tmp_path: Path) -> None:
    from reharness.engineer.factory import make_engineer

    down = [True]
    with pytest.raises(NoValidReplyError, match="none of the 8 model requests of the r1 baseline") as err:
        await improve(
            config(tmp_path / "flaky"), agent=FlakyClumsy(down=down), engineer=make_engineer("operators")
        )
    assert err.value.exit_code == 3 and "HTTP 503" in err.value.message
    down[0] = False  # the server is back: without the flag the stored errors are kept
    with pytest.raises(NoValidReplyError):
        await improve(
            config(tmp_path / "flaky"), agent=FlakyClumsy(down=down), engineer=make_engineer("operators")
        )
    healed = await improve(
        config(tmp_path / "flaky", retry_errors=True),
        agent=FlakyClumsy(down=down),
        engineer=make_engineer("operators"),
    )
    clean = await improve(
        config(tmp_path / "clean", retry_errors=True),
        agent=FlakyClumsy(),
        engineer=make_engineer("operators"),
    )
    assert healed.rounds[0].policy_errors == 0 and healed.rounds[0].baseline_model_calls > 8
    heldout: Any = {"run_dir": True, "cost": {"seconds"}}  # wall-clock seconds differ, nothing else may
    strip = {"config": {"out"}, "stack": True, "patch_path": True, "heldout": heldout}
    assert healed.model_dump(exclude=strip) == clean.model_dump(exclude=strip)


class SometimesDown(ClumsySolver):
    """The clumsy expert behind a server that fails one request in five (a function of the request)."""

    def start_episode(self, env: Any, protocol: str) -> Agent:
        return SometimesDown(env, protocol, self.calls)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if request.seed % 5 == 0:
            return ChatResponse(error="HTTP 502 from http://model/v1/chat/completions: bad gateway")
        return await super().complete(request)


async def test_infrastructure_errors_are_reported_apart(tmp_path: Path) -> None:
    from reharness.engineer.factory import make_engineer

    result = await improve(config(tmp_path, k=1), agent=SometimesDown(), engineer=make_engineer("operators"))
    base_errors = result.rounds[0].policy_errors
    assert base_errors > 0 and result.rounds[0].env_errors == 0
    (candidate_run,) = [  # k = 1: the one patched rerun of the train batch (not the held-out one)
        RunStore(p.parent) for p in (tmp_path / "runs" / "paired").glob("*/run.json")
        if RunStore(p.parent).read_meta().config["split"] == "train"
    ]  # fmt: skip
    patched = candidate_run.episodes()
    errors = sum(e.termination == "error" for e in patched)
    assert result.candidates[0].policy_errors == errors > 0
    report = (tmp_path / "report.md").read_text()
    assert f"round 1 baseline: {base_errors} policy, 0 env; r1-c0: {errors} policy, 0 env" in report
    assert "--retry-errors" in report
    assert json.loads((tmp_path / "candidates.json").read_text())[0]["policy_errors"] == errors


async def test_a_timed_out_candidate_continues_under_a_larger_limit(tmp_path: Path) -> None:
    # a message on every step: an effect from step 0, so the rerun reuses nothing of the baseline
    nudge = hook_patch("before_decision", "    return {'message': 'keep going'}\n")
    cut = config(tmp_path, k=1, batch_size=8, concurrency=2, candidate_timeout_s=1.5)
    first = await improve(cut, agent=ClumsySolver(delay=0.05), engineer=FixedEngineer([nudge]))
    (row,) = first.candidates
    assert row.status == "timeout" and not first.accepted
    (episodes,) = (tmp_path / "runs" / "paired").glob("*/episodes.jsonl")
    kept = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert len(kept) < 8  # stopped part-way; what finished is on disk
    calls = [0]
    again = config(tmp_path, k=1, batch_size=8, concurrency=2, candidate_timeout_s=None)
    second = await improve(again, agent=ClumsySolver(calls=calls), engineer=FixedEngineer([nudge]))
    (row,) = second.candidates
    assert row.status == "ok" and row.effect_steps > 0
    finished = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert len(finished) == 8 and finished[: len(kept)] == kept
    # the second invocation asked the model only for the episodes the first did not finish
    assert calls[0] == sum(e["num_steps"] for e in finished[len(kept) :])
