"""``reharness pool show`` through the CLI: a saved pool with a measured profile and a router decision log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pool_fixtures import failed_record, h0_config, run_episodes, small_pool

from reharness.pool import PolicyRef
from reharness.pool.judges import BehaviourJudge, DirectionJudge
from reharness.pool.profile import measure_profile
from reharness.pool.router import Router
from reharness.runtime import SolverAgent


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "reharness", *args], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("show")
    pool = small_pool()
    pool.save(root / "pool")
    h0 = run_episodes(h0_config(), SolverAgent(), n=8)
    sib = {s.id: run_episodes(s.config, SolverAgent(), n=8) for s in pool.siblings}
    profile = measure_profile(pool, h0, sib, policy=PolicyRef(spec="solver"), split="valid")
    profile.save(pool)
    log = root / "decisions.jsonl"
    router = Router(pool, profile, "vote", judges=[DirectionJudge(), BehaviourJudge()], log=log)

    async def go() -> None:
        for i, code in enumerate(["invalid_action", "step_limit", "invalid_action"]):
            decision = await router.route([failed_record([code], task=f"t{i}", steps=4)] * 2)
            router.record_outcome(decision, decision.choice[0], successes=i, attempts=4)
        await router.close()

    asyncio.run(go())
    return root / "pool", log, {s.name: s.id for s in pool.siblings}


def test_pool_show_prints_the_tables(shown) -> None:  # type: ignore[no-untyped-def]
    pool_dir, log, ids = shown
    proc = cli("pool", "show", str(pool_dir), "--log", str(log))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name, sid in ids.items():
        assert name in out and sid[:8] in out
    assert "step_limit: 30" in out and "show_admissible: False" in out  # what each sibling changes
    assert "loop_recovery" in out and "repeated_action, no_progress, step_limit" in out  # directions
    assert "profile by failure cluster" in out and "H0 by task type" in out
    assert "profile: policy solver" in out
    assert "routing: 3 decision(s) (vote 3); 2/3 tried group(s) rescued" in out
    assert "judge agreement behaviour ~ direction" in out


def test_pool_show_json(shown) -> None:  # type: ignore[no-untyped-def]
    pool_dir, log, ids = shown
    proc = cli("pool", "show", str(pool_dir), "--log", str(log), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [s["name"] for s in data["siblings"]] == list(ids)
    assert data["profile"]["format"] == "reharness-profile-v1"
    assert data["profile"]["policy"]["spec"] == "solver"
    routing = data["routing"]
    assert routing["decisions"] == 3 and routing["groups_rescued"] == 2
    assert sum(row["attempts"] for row in routing["siblings"].values()) == 12
    assert sum(row["successes"] for row in routing["siblings"].values()) == 0 + 1 + 2
    assert set(routing["judges"]) == {"direction", "behaviour"}
    assert all(row["votes"] + row["abstained"] == 3 for row in routing["judges"].values())


def test_pool_show_errors_are_clear(shown, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool_dir, _, _ = shown
    proc = cli("pool", "show", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("pool", "show", str(pool_dir), "--log", str(tmp_path / "none.jsonl"))
    assert proc.returncode == 2 and "decision log" in proc.stderr
    bad = tmp_path / "pool"
    subprocess.run(["cp", "-r", str(pool_dir), str(bad)], check=True)
    (bad / "profile.json").write_text('{"format": "reharness-profile-v1", "pool_ha')
    proc = cli("pool", "show", str(bad))
    assert proc.returncode == 2 and "profile.json is not valid JSON" in proc.stderr
