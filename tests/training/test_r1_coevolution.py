"""Co-evolution: r1 evaluations of a start target and of a trained one on the same test tasks, compared task
by task (``python -m reharness.experiments.r1_coevolution``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from targets import ClumsySolver

from reharness.experiments.r1 import Evaluator, R1Config
from reharness.experiments.r1_coevolution import coevolution, main
from reharness.runtime.agents import SCRIPTED_AGENTS


def evaluated(out: Path, agent: str, test_seed: int = 7) -> Path:
    config = R1Config(
        envs=["household"], agent=agent, out=str(out), test_batches=1, batch_size=6, max_steps=12,
        controls=False, test_seed=test_seed,
    )  # fmt: skip
    out.mkdir(parents=True)
    (out / "r1_config.json").write_text(json.dumps(config.model_dump(mode="json")))
    asyncio.run(Evaluator(config, None, lambda text: None, methods=("none", "operators")).run())
    return out


def test_coevolution_pairs_the_targets_task_by_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", lambda: ClumsySolver())
    before = evaluated(tmp_path / "before", "clumsy")  # fails some tasks; the teacher's snap patch rescues
    after = evaluated(tmp_path / "after", "solver")  # the "trained" target: solves every task
    result = coevolution([before], [after])
    success = result["success"]
    assert success["none@before"]["household"] < success["operators@before"]["household"]
    assert success["none@after"]["household"] == 1.0
    comparisons = {(c["a"], c["b"]): c for c in result["comparisons"] if c["env"] == "household"}
    own = comparisons[("none@after", "none@before")]  # what training the target bought on its own
    assert own["n"] == 6 and abs(own["delta"] - (1.0 - success["none@before"]["household"])) < 1e-6
    patch_before = comparisons[("operators@before", "none@before")]
    assert patch_before["delta"] > 0
    assert comparisons[("operators@after", "none@after")]["delta"] == 0  # nothing left to repair
    main(["--before", str(before), "--after", str(after)])
    printed = capsys.readouterr().out
    assert "| none | before |" in printed and "| none@after − none@before | household |" in printed

    other = evaluated(tmp_path / "other", "solver", test_seed=8)  # other tasks: refused, not compared
    with pytest.raises(ValueError, match="different test batches"):
        coevolution([before], [other])
    with pytest.raises(SystemExit):
        main(["--before", str(before), "--after", str(other)])
    assert (
        "error: the before and after runs were evaluated on different test batches" in capsys.readouterr().err
    )
