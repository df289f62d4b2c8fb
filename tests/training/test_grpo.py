"""The GRPO reward (paired rerun of each completion) and GRPO training of the micro engineer, with resume."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any, Literal

import pytest
from targets import SNAP, ClumsySolver

from reharness.core.errors import ConfigError
from reharness.engineer.base import render_reply
from reharness.measure.baseline import Baseline, Target, get_baseline
from reharness.measure.paired import PairingError, evaluate_patch
from reharness.patches import Patch
from reharness.runtime import RunSpec
from reharness.runtime.harness import HarnessConfig
from reharness.training.data import packet_rows, read_records
from reharness.training.grpo import GRPOStageConfig, run_grpo
from reharness.training.rerun import PairedRerunReward

HARMFUL = Patch(
    {"before_action": "def hook(ctx, nb):\n    return {'type': 'force_action', 'action': 'look'}\n"},
    "always look",
    "household",
)
SILENT = Patch({"after_feedback": "def hook(ctx, nb):\n    return None\n"}, "does nothing", "household")


def _reply(patch: Patch) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": render_reply(patch, "the agent writes near-miss commands")}]


def test_reward_is_the_paired_delta_of_each_completion(micro_data: Path, tmp_path: Path) -> None:
    rows = packet_rows(read_records(micro_data), "train")[:2]
    first, second = rows[0]["packet_id"], rows[1]["packet_id"]
    reward = PairedRerunReward(
        rows, micro_data / "runs", agents={"household": ClumsySolver()}, log_path=tmp_path / "r.jsonl"
    )
    completions = [_reply(SNAP), [{"role": "assistant", "content": "<think>hmm"}], _reply(HARMFUL)]
    completions += [_reply(SILENT), _reply(SNAP), _reply(SNAP)]
    ids = [first] * 4 + [second] * 2
    try:
        rewards = reward(prompts=[None] * 6, completions=completions, packet_id=ids)
        assert all(base.cached for base in reward._baselines.values())  # the collection's baselines
    finally:
        reward.close()
    expected = evaluate_patch(SNAP, _baseline(rows[0], micro_data), ClumsySolver(), tmp_path)
    assert rewards[0] == asyncio.run(expected).delta > 0
    assert rewards[1] == 0.0 and rewards[3] == 0.0  # unparsable; degenerate (never fires)
    assert rewards[2] < 0  # harmful patches are penalised, not clipped to 0
    assert rewards[4] == rewards[5] > 0  # same patch, same tasks and seeds: same reward
    log = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [e["status"] for e in log] == ["ok", "invalid", "ok", "degenerate", "ok", "ok"]
    assert [e["delta"] for e in log] == rewards


def _baseline(row: dict[str, Any], micro_data: Path) -> Baseline:
    spec = RunSpec.model_validate(row["spec"])
    target = Target(HarnessConfig.model_validate(row["harness"]))
    return asyncio.run(get_baseline(spec, ClumsySolver(), target, micro_data / "runs"))


def test_reward_refuses_a_batch_whose_tasks_changed(micro_data: Path) -> None:
    row = dict(packet_rows(read_records(micro_data), "train")[0])
    row["tasks"] = list(reversed(row["tasks"]))
    reward = PairedRerunReward([row], micro_data / "runs", agents={"household": ClumsySolver()})
    try:
        with pytest.raises(PairingError, match="cannot pair"):
            reward(prompts=[None], completions=[_reply(SNAP)], packet_id=[row["packet_id"]])
    finally:
        reward.close()


def test_grpo_trains_and_resumes_from_its_checkpoint(
    micro_engineer: Path, micro_data: Path, tmp_path: Path
) -> None:
    values = dict(
        data=str(micro_data), sft=str(micro_engineer), out=str(tmp_path), k=2, steps=2, max_new_tokens=32,
        save_steps=1,
    )  # fmt: skip
    agents = {"household": ClumsySolver()}
    summary = run_grpo(GRPOStageConfig(**values), agents=agents)
    assert summary["stage"] == "grpo" and summary["resumed_from"] is None
    assert len(summary["reward_curve"]) == 2 and summary["timing"]["steps_timed"] == 2
    assert len(summary["valid_frac_curve"]) == len(summary["variance_frac_curve"]) == 2
    # the curves recompute from the scored replies of each step (rewards.jsonl): valid share, and share of
    # packets whose k rewards differ (a GRPO signal)
    scored = [json.loads(line) for line in (tmp_path / "rewards.jsonl").read_text().splitlines()]
    for step in (0, 1):
        replies = [e for e in scored if e["step"] == step]
        valid = sum(e["status"] == "ok" for e in replies) / len(replies)
        assert summary["valid_frac_curve"][step] == pytest.approx(valid, abs=1e-4)
        by_packet: dict[str, set[float]] = {}
        for e in replies:
            by_packet.setdefault(e["packet_id"], set()).add(e["delta"] if e["status"] == "ok" else 0.0)
        varied = sum(len(v) > 1 for v in by_packet.values()) / len(by_packet)
        assert summary["variance_frac_curve"][step] == pytest.approx(varied, abs=1e-4)
    timing = summary["timing"]
    assert timing["rerun_seconds"] > 0 and 0 < timing["rerun_share"] < 1
    assert (tmp_path / "checkpoints" / "checkpoint-2").is_dir()
    info = json.loads((tmp_path / "engineer.json").read_text())
    assert info["prompt_style"]["kind"] == "compact" and info["prompt_style"]["max_new_tokens"] == 32
    assert info["config"]["epsilon"] == 0.2 and info["config"]["epsilon_high"] == 0.28
    assert info["config"]["beta"] == 0.0
    valid = info["valid"]  # model selection: the SFT start and the result scored on the valid packet
    assert valid["sft"]["packets"] == valid["grpo"]["packets"] == 1
    # not degenerate: both engineers write (greedy) a valid program whose patch rescues valid-packet tasks
    assert valid["sft"]["valid"] == valid["grpo"]["valid"] == 1
    assert valid["sft"]["mean_delta"] > 0 and valid["grpo"]["mean_delta"] > 0
    log = [json.loads(line) for line in (tmp_path / "rewards.jsonl").read_text().splitlines()]
    assert len(log) == 4 and {e["step"] for e in log} == {0, 1}  # k=2 completions per step
    assert all(e["status"] in ("ok", "invalid", "degenerate") for e in log)
    # rerun as it was (a crash after the last checkpoint): it trains no step more
    same = run_grpo(GRPOStageConfig(**values), agents=agents)
    assert str(same["resumed_from"]).endswith("checkpoint-2") and len(same["reward_curve"]) == 2
    assert len((tmp_path / "rewards.jsonl").read_text().splitlines()) == 4
    assert not (tmp_path / "checkpoints" / "checkpoint-3").exists()
    resumed = run_grpo(GRPOStageConfig(**(values | {"steps": 3})), agents=agents)
    assert str(resumed["resumed_from"]).endswith("checkpoint-2")
    assert len((tmp_path / "rewards.jsonl").read_text().splitlines()) == 6  # only step 3 ran


def test_program_change_counts_changed_replies_and_token_edits() -> None:
    from reharness.training.grpo_select import edit_distance, program_change

    assert edit_distance("kitten", "sitting") == 3 and edit_distance([], [1, 2]) == 2
    change = program_change(["a b c", "x y"], ["a b c", "x z"], str.split)
    assert change == {"changed": 0.5, "mean_edit_distance": 0.5}


def test_grpo_keeps_the_step_with_the_best_valid_score(
    micro_engineer: Path, micro_data: Path, tmp_path: Path
) -> None:
    """``select=valid``: SFT (step 0), every checkpoint and the last step scored on the valid packet (greedy);
    the best is kept, ties to the later step; the curve reports each step's change from SFT's program."""
    config = GRPOStageConfig(
        data=str(micro_data), sft=str(micro_engineer), out=str(tmp_path), k=2, steps=2, max_new_tokens=32,
        save_steps=1, select="valid",
    )  # fmt: skip
    summary = run_grpo(config, agents={"household": ClumsySolver()})
    selection = summary["selection"]
    curve = selection["valid_curve"]
    assert [c["step"] for c in curve] == [0, 1, 2] and all(c["packets"] == 1 for c in curve)
    assert curve[0]["changed"] == 0.0 and curve[0]["mean_edit_distance"] == 0.0  # SFT against itself
    best = max(curve, key=lambda c: (c["mean_delta"], c["step"]))
    assert selection["selected_step"] == best["step"] and summary["valid"]["grpo"]["step"] == best["step"]
    kept = (tmp_path / "model.safetensors").read_bytes()
    if best["step"] == 0:
        assert kept == (micro_engineer / "model.safetensors").read_bytes()
    info = json.loads((tmp_path / "engineer.json").read_text())
    assert info["selection"]["selected_step"] == best["step"] and not (tmp_path / "select").exists()


def test_grpo_config_and_errors_name_the_fix(tmp_path: Path, micro_data: Path) -> None:
    with pytest.raises(ConfigError, match="--k"):
        GRPOStageConfig.build(data="d", sft="s", out="o", k=1)
    with pytest.raises(ConfigError, match="epsilon_high"):
        GRPOStageConfig.build(data="d", sft="s", out="o", epsilon=0.3, epsilon_high=0.2)
    with pytest.raises(ConfigError, match="need device='cuda'"):
        GRPOStageConfig.build(data="d", sft="s", out="o", use_vllm=True)
    with pytest.raises(ConfigError, match="no SFT engineer") as err:
        run_grpo(GRPOStageConfig(data=str(micro_data), sft=str(tmp_path), out=str(tmp_path / "o")))
    assert "--stage sft" in str(err.value.hint)


def test_constrained_grpo_samples_only_programs_that_compile(
    micro_engineer: Path, micro_data: Path, tmp_path: Path
) -> None:
    # the micro engineer cannot write its program reliably when sampling unconstrained (see the fixture);
    # under the grammar every sampled reply compiles (given room to finish: a reply cut by the token budget
    # cannot), so every reward is a measured Δ
    values = dict(
        data=str(micro_data), sft=str(micro_engineer), out=str(tmp_path / "c"), k=4, steps=2,
        max_new_tokens=96, save_steps=2, constrain=True, temperature=1.2, select_on_valid=False,
    )  # fmt: skip
    summary = run_grpo(GRPOStageConfig(**values), agents={"household": ClumsySolver()})
    assert summary["valid_frac_curve"] == [1.0, 1.0]
    log = [json.loads(line) for line in (tmp_path / "c" / "rewards.jsonl").read_text().splitlines()]
    assert len(log) == 8 and all(e["status"] in ("ok", "degenerate") for e in log)
    assert json.loads((tmp_path / "c" / "engineer.json").read_text())["config"]["constrain"] is True

    hooks = tmp_path / "hooks-engineer"  # the same engineer, declared a writer of hook code
    shutil.copytree(micro_engineer, hooks)
    info = json.loads((hooks / "engineer.json").read_text())
    info["prompt_style"]["language"] = "hooks"
    (hooks / "engineer.json").write_text(json.dumps(info))
    with pytest.raises(ConfigError, match="repair-program engineer") as err:
        run_grpo(GRPOStageConfig(**(values | {"sft": str(hooks), "out": str(tmp_path / "h")})))
    assert "--language program" in str(err.value.hint)


def test_the_contested_stream_keeps_packets_whose_teacher_candidates_scored_differently(
    micro_data: Path, tmp_path: Path
) -> None:
    from reharness.training.data import RECORDS, contested
    from reharness.training.grpo import stream_rows, train_rows

    records = read_records(micro_data)
    train = [i for i, r in enumerate(records) if r["split"] == "train" and r.get("packet")]
    assert len(train) >= 2
    same = [{"status": "ok", "valid": True, "delta": 0.1}] * 3  # every repair scores the same
    apart = [{"status": "ok", "valid": True, "delta": 0.2}, {"status": "invalid", "valid": False, "delta": 0}]
    for n, i in enumerate(train):
        records[i] = records[i] | {"teacher": {"candidates": apart if n == 0 else same}}
    data = tmp_path / "data"
    data.mkdir()
    (data / RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records))

    def rows(packets: Literal["all", "contested"]) -> list[dict[str, Any]]:
        return stream_rows(train_rows(GRPOStageConfig(data=str(data), sft="s", out="o")), packets)

    assert [r["packet_id"] for r in rows("contested")] == [records[train[0]]["packet_id"]]
    assert len(rows("all")) == len(train)
    assert not contested(records[train[1]]) and contested(records[train[0]])
    harmful = [{"status": "ok", "delta": 0.0}, {"status": "ok", "delta": -0.1}]
    assert contested({"teacher": {"candidates": harmful}})
    # no contested packet at all: the stream keeps every packet rather than train on nothing
    records[train[0]] = records[train[0]] | {"teacher": {"candidates": same}}
    (data / RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records))
    assert len(rows("contested")) == len(train)
    with pytest.raises(ConfigError, match="packets"):
        GRPOStageConfig.build(data="d", sft="s", out="o", packets="some")


def test_shuffled_reward_control_permutes_each_groups_measured_rewards(
    micro_data: Path, tmp_path: Path
) -> None:
    """The loss sees the group's measured Δs in a seeded random order: same multiset, other replies."""
    from types import SimpleNamespace

    rows = packet_rows(read_records(micro_data), "train")[:2]
    first, second = rows[0]["packet_id"], rows[1]["packet_id"]
    completions = [_reply(SNAP), _reply(HARMFUL), _reply(SILENT), [{"role": "assistant", "content": "x"}]]
    completions += [_reply(SNAP), _reply(HARMFUL)]
    ids = [first] * 4 + [second] * 2

    def rewards(control: Literal["none", "shuffled"], step: int, log: Path | None = None) -> list[float]:
        reward = PairedRerunReward(
            rows, micro_data / "runs", agents={"household": ClumsySolver()}, reward_control=control, seed=3,
            log_path=log,
        )  # fmt: skip
        state = SimpleNamespace(global_step=step)
        try:
            return reward(prompts=[None] * 6, completions=completions, packet_id=ids, trainer_state=state)
        finally:
            reward.close()

    measured = rewards("none", 0)
    assert measured[0] > 0 > measured[1] and measured[2] == measured[3] == 0.0  # distinct values to permute
    shuffled = {step: rewards("shuffled", step, tmp_path / f"{step}.jsonl") for step in range(6)}
    for values in shuffled.values():  # every group keeps exactly its measured rewards
        assert sorted(values[:4]) == sorted(measured[:4]) and sorted(values[4:]) == sorted(measured[4:])
    assert any(values != measured for values in shuffled.values())  # the loss sees them permuted
    assert len({tuple(v) for v in shuffled.values()}) > 1  # a new permutation per step
    assert rewards("shuffled", 2) == shuffled[2]  # seeded: a resumed step permutes the same way
    log = [json.loads(line) for line in (tmp_path / "1.jsonl").read_text().splitlines()]
    assert [e["delta"] for e in log] == measured and [e["reward"] for e in log] == shuffled[1]
