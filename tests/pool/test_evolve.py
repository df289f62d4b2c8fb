"""Directional evolution end to end with a scripted target whose failures one direction repairs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from agents import TypoSolver

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.pool import load_pool
from reharness.pool.evolve import EvolveConfig, evolve

HERE = Path(__file__).resolve().parent
OPTIONS = dict(
    env="household",
    agent="typo-solver",
    directions="action_validity,loop_recovery,goal_tracking",
    batch_size=12,
    valid_n=12,
    generations=2,
    k=2,
    size=3,
    concurrency=8,
)


def _evolve(out: Path, **extra):  # type: ignore[no-untyped-def]
    config = EvolveConfig.build(**(OPTIONS | {"out": str(out)} | extra))
    return asyncio.run(evolve(config, agent=TypoSolver()))


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return _evolve(tmp_path_factory.mktemp("evolve") / "pool")


def test_evolution_finds_the_repair_of_the_failing_direction(evolved) -> None:  # type: ignore[no-untyped-def]
    # H0: the 8 garbled train tasks fail (all in action_validity's and loop_recovery's clusters)
    assert [e.success for e in evolved.h0_train.episodes].count(False) == 8
    assert len(evolved.clusters["action_validity"]) == 8 and evolved.clusters["goal_tracking"] == []
    best = {r["id"]: r for r in evolved.candidates}["action_validity-g1-c0"]
    assert best["origin"] == "patch: snap_to_admissible" and best["fitness"] == 8 and best["broken"] == []
    # loop_recovery's repairs (loop breaker, history windows) rescue none of the garbled tasks
    assert all(r["fitness"] <= 0 for r in evolved.candidates if r["direction"] == "loop_recovery")
    [sibling] = evolved.pool.siblings
    assert sibling.direction == "action_validity" and sibling.provenance.generation == 1
    assert [m.lineage.cid for m in evolved.admitted] == ["action_validity-g1-c0"]
    failed_valid = sorted(e.task_id for e in evolved.h0_valid.episodes if not e.success)
    assert sorted(evolved.admitted[0].rescued) == failed_valid and evolved.admitted[0].broken == []


def test_the_pool_directory_and_report(evolved) -> None:  # type: ignore[no-untyped-def]
    out = evolved.out
    doc = json.loads((out / "pool.json").read_text())
    assert [{k: s[k] for k in ("id", "name", "direction")} for s in doc["siblings"]] == [
        {"id": s.id, "name": s.name, "direction": s.direction} for s in evolved.pool.siblings
    ]
    loaded = load_pool(out)
    assert loaded.document() == evolved.pool.document()
    assert loaded.meta["evolve"]["batch_size"] == 12
    report = (out / "report.md").read_text()
    assert "## Coverage" in report and "| action_validity (2) | 2 |" in report
    lines = (out / "evolve" / "candidates.jsonl").read_text().splitlines()
    assert len(lines) == len(evolved.candidates) == 11  # no admissible_template mutation while unlisted


def test_rerun_resumes_from_the_stored_runs(evolved, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    again = _evolve(evolved.out)
    assert again.pool.document().content_hash == evolved.pool.document().content_hash


def test_evolve_resumes_after_sigkill(evolved, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "pool"
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(HERE)!r})
        from agents import TypoSolver
        from reharness.pool.evolve import EvolveConfig, evolve
        config = EvolveConfig.build(**{OPTIONS!r}, out={str(out)!r})
        asyncio.run(evolve(config, agent=TypoSolver()))
        """
    )
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kill once a few candidate runs have finished
        if len(list((out / "evolve" / "runs" / "siblings").glob("*/episodes.jsonl"))) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "pool.json").exists(), "the evolve finished before it could be killed"
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    assert load_pool(out).document().content_hash == evolved.pool.document().content_hash


def test_holdout_direction_is_left_out(tmp_path: Path) -> None:
    result = _evolve(tmp_path / "pool", holdout_direction="action_validity", generations=1)
    assert "action_validity" not in [d.name for d in result.pool.directions]
    assert result.pool.siblings == [] and result.pool.meta["holdout_direction"] == "action_validity"
    assert "held out: action_validity" in (tmp_path / "pool" / "report.md").read_text()


def test_harness_file_is_h0_of_the_evolution(tmp_path: Path) -> None:
    """harness: H0 (and so every candidate's base and the frozen pool's H0) is the file's harness."""
    harness = tmp_path / "h0.yaml"
    harness.write_text("step_limit: 7\nshow_admissible: true\n")
    result = _evolve(tmp_path / "pool", harness=str(harness), generations=1, directions="action_validity")
    assert result.pool.h0.step_limit == 7 and result.pool.h0.show_admissible is True
    assert all(s.base == result.pool.h0 for s in result.pool.siblings)
    runs = [json.loads(p.read_text()) for p in (tmp_path / "pool" / "evolve" / "runs").glob("**/run.json")]
    assert runs and all(r["harness"]["config"]["step_limit"] == 7 for r in runs)


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="size"):
        EvolveConfig.build(**(OPTIONS | {"size": 0}))
    with pytest.raises(UnknownNameError, match="action_validity"):
        _evolve(Path("/nonexistent/never-written"), holdout_direction="action_validty")


def test_finalists_add_only_candidates_that_rescue_something_new() -> None:
    from reharness.pool.evolve import pick_finalists
    from reharness.pool.lineage import Lineage

    def cand(cid: str, fitness: float, rescued: list[str], broken: list[str] = []) -> Lineage:  # noqa: B006
        return Lineage("action_validity", 1, cid=cid, fitness=fitness, rescued=rescued, broken=broken)

    a = cand("a", 3, ["t1", "t2", "t3"])
    same = cand("same", 3, ["t1", "t2"])  # a subset of a's rescues: adds nothing
    other = cand("other", 1, ["t4"], ["t9"])
    tie = cand("tie", 3, ["t1", "t2", "t3"], ["t8"])  # as fit as a but breaks more: ranked after it
    assert [c.cid for c in pick_finalists([a, same, other, tie], 3)] == ["a", "other"]
    assert [c.cid for c in pick_finalists([tie, other, a], 1)] == ["a"]
    assert pick_finalists([], 2) == []
    with pytest.raises(ConfigError, match="finalists"):
        EvolveConfig.build(**(OPTIONS | {"finalists": 0}))


def test_config_mutations_follow_the_parent_config() -> None:
    from reharness.pool.directions import load_directions
    from reharness.pool.mutations import LISTING_WINDOW, config_mutations
    from reharness.runtime.harness import base_harness_config

    [validity] = [d for d in load_directions(None) if d.name == "action_validity"]
    h0 = base_harness_config("household")
    assert not h0.show_admissible and h0.history_window == 0
    deltas = config_mutations(validity, h0)
    # the listing comes with a bounded history; its template is not mutated while nothing shows it
    assert {"show_admissible": True, "history_window": LISTING_WINDOW} in deltas
    assert not any("admissible_template" in d for d in deltas)
    listed = h0.model_copy(update={"show_admissible": True, "history_window": 8})
    deltas = config_mutations(validity, listed)
    assert {"show_admissible": False} in deltas and any("admissible_template" in d for d in deltas)
    assert all(set(d) <= set(validity.config_fields) for d in deltas)
