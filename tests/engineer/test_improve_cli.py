"""``reharness improve``: the whole loop on real episodes, its files, its JSON contract and errors.

The target is the clumsy expert of ``clumsy.SPEC.env`` from ``test_paired`` (registered as the scripted
agent ``clumsy`` for the CLI tests); the engineer is either a fixed list of proposals or the built-in
``operators``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clumsy import SNAP, SPEC, ClumsySolver, hook_patch
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.engineer.base import Engineer, Proposal
from reharness.engineer.improve import ImproveConfig, improve
from reharness.failures.packets import FailurePacket
from reharness.patches import Patch
from reharness.runtime.agents import SCRIPTED_AGENTS
from reharness.store.run_store import RunStore

HARMFUL = hook_patch(
    "before_action", "    if ctx['step'] >= 1:\n        return {'type': 'force_action', 'action': 'look'}\n"
)
SILENT = hook_patch("after_feedback", "    return None\n")
CONTRACT_KEYS = {"accepted", "patch_path", "candidates", "heldout"}
HELDOUT_KEYS = {"baseline_success", "patched_success", "delta", "ci_low", "ci_high", "n"}


class FixedEngineer(Engineer):
    """Proposes the given patches in order (``None``: a reply without a patch), whatever the packet."""

    name = "fixed"

    def __init__(self, patches: list[Patch | None]) -> None:
        self.patches = patches
        self.packets: list[FailurePacket] = []

    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        self.packets.append(packet)
        picks = [self.patches[i % len(self.patches)] for i in range(n)]
        return [
            Proposal(p, f"reply {i}", None if p else "no <patch> block", None if p else "no_patch", {"i": i})
            for i, p in enumerate(picks)
        ]


def config(out: Path, **overrides: object) -> ImproveConfig:
    values: dict[str, object] = dict(
        env=SPEC.env, agent="clumsy", engineer="fixed", batch_size=8, k=4, eval_n=12, max_steps=12
    )
    return ImproveConfig.build(**(values | overrides | {"out": str(out)}))


async def test_improve_accepts_the_best_candidate_and_writes_its_outputs(tmp_path: Path) -> None:
    engineer = FixedEngineer([None, SILENT, HARMFUL, SNAP])
    calls = [0]
    result = await improve(config(tmp_path), agent=ClumsySolver(calls=calls), engineer=engineer)
    contract = result.contract()
    assert set(contract) == CONTRACT_KEYS and contract["accepted"] is True
    rows = {c["id"]: c for c in contract["candidates"]}
    assert list(rows) == ["r1-c0", "r1-c1", "r1-c2", "r1-c3"]
    assert all(set(c) == {"id", "valid", "delta", "rescued", "broken"} for c in rows.values())
    assert not rows["r1-c0"]["valid"] and not rows["r1-c1"]["valid"]  # no patch; degenerate
    assert rows["r1-c2"]["valid"] and rows["r1-c2"]["delta"] < 0 and rows["r1-c2"]["broken"] > 1
    assert rows["r1-c3"]["delta"] > 0 and rows["r1-c3"]["broken"] == 0
    assert [c.id for c in result.candidates if c.accepted] == ["r1-c3"]
    heldout = contract["heldout"]
    assert set(heldout) == HELDOUT_KEYS and heldout["n"] == 12
    assert (
        heldout["patched_success"] > heldout["baseline_success"] and 0 < heldout["ci_low"] <= heldout["delta"]
    )
    assert Patch.from_dict(json.loads(Path(contract["patch_path"]).read_text())).identity == SNAP.identity
    packet = engineer.packets[0]
    assert packet.header.benchmark == SPEC.env and packet.header.failures_found == 8 - round(
        8 * result.rounds[0].baseline_success
    )
    table = json.loads((tmp_path / "candidates.json").read_text())
    assert [r["status"] for r in table] == ["invalid", "degenerate", "ok", "ok"]
    csv_lines = (tmp_path / "candidates.csv").read_text().splitlines()
    assert csv_lines[0].startswith("round,id,valid,status") and len(csv_lines) == 5
    report = (tmp_path / "report.md").read_text()
    assert "| r1-c3 ✔ | ok |" in report and "## Held-out evaluation" in report
    assert len((tmp_path / "round-1" / "proposals.jsonl").read_text().splitlines()) == 4
    files = ["candidates.json", "candidates.csv", "report.md", "result.json", "patch.json"]
    before = {name: (tmp_path / name).read_bytes() for name in files}
    used = calls[0]
    await improve(config(tmp_path), agent=ClumsySolver(calls=calls), engineer=engineer)
    assert calls[0] == used  # every baseline and patched run was loaded from the store
    assert {name: (tmp_path / name).read_bytes() for name in files} == before


async def test_rounds_start_from_the_accepted_harness_on_new_tasks(tmp_path: Path) -> None:
    result = await improve(
        config(tmp_path, rounds=2, k=1), agent=ClumsySolver(), engineer=FixedEngineer([SNAP])
    )
    first, second = result.rounds
    assert first.accepted == "r1-c0" and second.accepted is None and len(result.stack) == 1
    assert first.batch_seed != second.batch_seed
    assert second.baseline_success == 1.0 and second.failures == 0 == second.proposals  # the fix is installed
    assert [c.id for c in result.candidates] == ["r1-c0"]
    runs = sorted((tmp_path / "runs" / "baselines").glob("*/*/run.json"))
    metas = [RunStore(p.parent).read_meta() for p in runs]
    overlays = {m.seed: [o["id"] for o in m.harness["overlays"]] for m in metas}
    assert overlays[first.batch_seed] == [] and overlays[second.batch_seed] == [SNAP.identity]
    tasks = [{e.task_id for e in RunStore(p.parent).episodes()} for p in runs if p.parent.name.count("-")]
    assert len(tasks) == 3 and tasks[0] != tasks[1]


async def test_batches_can_come_from_valid(tmp_path: Path) -> None:
    """--batch-split valid: the round's batch (and the candidates' paired reruns) are valid tasks, the
    held-out comparison stays on test."""
    result = await improve(
        config(tmp_path, batch_split="valid", k=1), agent=ClumsySolver(), engineer=FixedEngineer([SNAP])
    )
    assert result.rounds[0].accepted == "r1-c0"
    splits = {}
    for run in (tmp_path / "runs").glob("**/run.json"):
        store = RunStore(run.parent)
        splits[run.parent.name] = {e.task_id.split("/")[1] for e in store.episodes()}
    assert {"valid"} in splits.values() and {"test"} in splits.values()
    assert not any("train" in found for found in splits.values())
    assert "(`valid` tasks)" in (tmp_path / "report.md").read_text()


def test_cli_starts_from_the_given_harness_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--harness: every baseline, candidate and held-out run uses the file's fields (here a reply budget and
    the admissible list shown); --max-steps still sets the step limit on top of the file's."""
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    harness = tmp_path / "short.yaml"
    harness.write_text("step_limit: 30\nshow_admissible: true\nsampling:\n  max_tokens: 77\n")
    out = tmp_path / "out"
    code, stdout, _ = _cli(
        "improve", "--env", SPEC.env, "--agent", "clumsy", "--engineer", "operators", "--batch-size", "4",
        "--k", "1", "--eval-n", "4", "--max-steps", "9", "--harness", str(harness), "--out", str(out),
        "--json",
    )  # fmt: skip
    assert code == 0, stdout
    metas = [RunStore(p.parent).read_meta() for p in sorted((out / "runs").glob("**/run.json"))]
    assert len(metas) >= 3  # the round's baseline, a candidate's rerun, the held-out pair
    for meta in metas:
        used = meta.harness["config"]
        assert used["show_admissible"] is True and used["sampling"]["max_tokens"] == 77
        assert used["step_limit"] == 9
    assert json.loads((out / "result.json").read_text())["config"]["harness"] == str(harness)


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_cli_prints_exactly_the_json_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    code, out, _ = _cli(
        "improve", "--env", SPEC.env, "--agent", "clumsy", "--engineer", "operators", "--batch-size", "6",
        "--k", "2", "--eval-n", "6", "--max-steps", "12", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0, out
    data = json.loads(out)
    assert set(data) == CONTRACT_KEYS
    # seeded and scripted, so the figures are exact: the operators' two proposals both rescue 3 of the 6
    # tasks and break none; on that tie the earlier candidate is accepted, and it fixes all 6 held-out tasks
    assert data["candidates"] == [
        {"id": "r1-c0", "valid": True, "delta": 0.5, "rescued": 3, "broken": 0},
        {"id": "r1-c1", "valid": True, "delta": 0.5, "rescued": 3, "broken": 0},
    ]
    assert data["accepted"] is True and data["patch_path"] == str(tmp_path / "patch.json")
    assert data["heldout"] == {
        "baseline_success": 0.166667, "patched_success": 1.0, "delta": 0.833333,
        "ci_low": 0.5, "ci_high": 1.0, "n": 6,
    }  # fmt: skip
    table = json.loads((tmp_path / "candidates.json").read_text())
    assert [r["accepted"] for r in table] == [True, False]
    assert Patch.from_dict(json.loads(Path(data["patch_path"]).read_text())).identity == table[0]["patch_id"]
    assert (tmp_path / "report.md").is_file() and (tmp_path / "candidates.csv").is_file()


def test_demo_prints_the_before_after_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    code, out, _ = _cli(
        "demo", "--agent", "clumsy", "--batch-size", "6", "--k", "2", "--eval-n", "6", "--max-steps", "12",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out
    assert "candidates" in out and "before (unpatched)" in out and "after (accepted patch)" in out
    assert f"{SPEC.env} / clumsy / operators" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "kitchen"], "unknown environment"),
        (["--engineer", "wizard"], "unknown engineer"),
        (["--eval-split", "holdout"], f"--eval-split holdout: {SPEC.env}: unknown split"),
        (["--eval-n", "100001"], "--eval-n 100001 exceeds"),
        (["--batch-split", "test"], "--batch-split and --eval-split are both 'test'"),
        (["--batch-split", "holdout"], f"--batch-split holdout: {SPEC.env}: unknown split"),
        (["--eval-n", "0"], "--eval-n"),
        (["--batch-size", "1000000"], "--batch-size 1000000 exceeds the 100000 tasks"),
        (["--k", "0"], "--k"),
    ],
)
def test_cli_rejects_bad_arguments_with_a_fix(args: list[str], message: str, tmp_path: Path) -> None:
    base = {"--env": SPEC.env, "--agent": "random", "--engineer": "operators", "--out": str(tmp_path)}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    code, out, err = _cli("improve", *[x for kv in base.items() for x in kv])
    assert code == 2 and message in err and "how to fix" in err and not out


def test_cli_candidate_timeout_reaches_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", ClumsySolver)
    args = ["improve", "--env", SPEC.env, "--agent", "clumsy", "--engineer", "operators",
            "--batch-size", "4", "--k", "1", "--eval-n", "2", "--max-steps", "6", "--json"]  # fmt: skip
    code, out, _ = _cli(*args, "--out", str(tmp_path / "nolimit"), "--candidate-timeout", "0")
    assert code == 0, out
    assert (
        json.loads((tmp_path / "nolimit" / "result.json").read_text())["config"]["candidate_timeout_s"]
        is None
    )
    code, out, _ = _cli(*args, "--out", str(tmp_path / "short"), "--candidate-timeout", "0.000001")
    assert code == 0, out
    (row,) = json.loads((tmp_path / "short" / "candidates.json").read_text())
    assert row["status"] == "timeout" and json.loads(out)["accepted"] is False
    code, _, err = _cli(*args, "--out", str(tmp_path / "bad"), "--candidate-timeout", "-1")
    assert code == 2 and "--candidate-timeout" in err and not (tmp_path / "bad").exists()
