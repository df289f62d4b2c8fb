"""Packet collection and the cold-start SFT set on real household batches of the clumsy target."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import collect

from reharness.engineer.prompts import build_messages
from reharness.failures.packets import FailurePacket
from reharness.measure.paired import PairedResult
from reharness.patches.reply import extract_patch
from reharness.runtime import RunSpec
from reharness.runtime.executor import planned_episodes
from reharness.runtime.harness import Harness, HarnessConfig
from reharness.training.data import (
    RECORDS,
    batch_seed,
    export,
    load_parquet,
    pick_example,
    read_records,
    sft_rows,
)


def _result(cid: str, status: str, delta: float, broken: int = 0, rescued: int = 0) -> PairedResult:
    return PairedResult(
        candidate_id=cid,
        status=status,  # type: ignore[arg-type]
        n=8,
        baseline_score=0.5,
        patched_score=0.5 + delta,
        delta=delta,
        baseline_success=0.5,
        patched_success=0.5 + delta,
        success_delta=delta,
        broken=[f"b{i}" for i in range(broken)],
        rescued=[f"r{i}" for i in range(rescued)],
    )


def test_pick_example_keeps_the_best_valid_proposal_with_nonnegative_delta() -> None:
    assert pick_example([_result("a", "ok", -0.1), _result("b", "degenerate", 0.0)]) is None
    assert pick_example([_result("a", "invalid", 0.0), _result("b", "ok", 0.0)]) == 1  # Δ = 0 is kept
    picks = [_result("a", "ok", 0.25, broken=1), _result("b", "ok", 0.25), _result("c", "ok", 0.125)]
    assert pick_example(picks) == 1  # same Δ, fewer broken
    assert pick_example([_result("a", "ok", 0.1, rescued=1), _result("b", "ok", 0.1, rescued=2)]) == 1


def test_records_hold_packet_prompt_tasks_and_the_measured_teacher_reply(micro_data: Path) -> None:
    records = read_records(micro_data)
    assert [r["key"] for r in records] == [
        "household/train/0", "household/train/1", "household/train/2", "household/valid/0",
    ]  # fmt: skip
    seeds = {r["batch_seed"] for r in records}
    assert len(seeds) == 4 and records[0]["batch_seed"] == batch_seed(0, "household", "train", 0)
    for record in records:
        assert record["failures"] > 0 and record["packet"]  # the clumsy target always fails some tasks
        packet = FailurePacket.model_validate_json(record["packet"])
        system, user = build_messages(packet)
        assert (record["system"], record["user"]) == (system.content, user.content)
        spec = RunSpec.model_validate(record["spec"])
        harness = Harness(HarnessConfig.model_validate(record["harness"]))
        assert spec.split == record["split"] and harness.config.step_limit == 12
        planned = [[t["task_identity"], t["seed"]] for t in record["tasks"]]
        assert planned == [list(p) for p in planned_episodes(spec, harness)]  # GRPO can rerun exactly these
        teacher = record["teacher"]
        assert teacher["engineer"] == "operators" and len(teacher["candidates"]) == 3
        ok = [c for c in teacher["candidates"] if c["status"] == "ok" and c["delta"] >= 0]
        if not ok:
            assert record["reply"] is None
            continue
        assert record["delta"] == max(c["delta"] for c in ok) >= 0
        kept = teacher["candidates"][teacher["kept"]]
        assert kept["delta"] == record["delta"] and kept["patch_id"] == record["patch_id"]
        assert record["reply"].startswith("<think>") and record["reply"].endswith("</patch>")
        assert extract_patch(record["reply"]).hooks  # Harness-R1 format, parses back into a patch
    assert len(sft_rows(records, "train")) >= 2 and all(r["delta"] > 0 for r in sft_rows(records))


def test_collection_resumes_and_is_deterministic(micro_data: Path, tmp_path: Path) -> None:
    calls = [0]
    again = collect(micro_data, calls)
    assert calls[0] == 0  # every batch was already recorded: nothing reruns
    assert again == read_records(micro_data)
    first = collect(tmp_path, train_batches=1, valid_batches=0)
    with (tmp_path / RECORDS).open("a", encoding="utf-8") as handle:
        handle.write('{"key": "household/train/1", "torn')  # an interrupted write
    records = collect(tmp_path, train_batches=2, valid_batches=0)
    assert records[0] == first[0] and records[1]["key"] == "household/train/1"
    assert [json.loads(line)["key"] for line in (tmp_path / RECORDS).read_text().splitlines()] == [
        "household/train/0", "household/train/1",
    ]  # fmt: skip
    fresh = read_records(micro_data)[:2]
    assert [r["packet"] for r in records] == [r["packet"] for r in fresh]  # same seeds, same packets


def test_concurrent_batches_record_what_one_at_a_time_records(micro_data: Path, tmp_path: Path) -> None:
    parallel = read_records(micro_data)  # collected with the default batch_concurrency (several at once)
    sequential = collect(tmp_path, batch_concurrency=1)
    keys = ["household/train/0", "household/train/1", "household/train/2", "household/valid/0"]
    assert [r["key"] for r in parallel] == keys  # the file is in plan order whatever finished first
    assert [r["key"] for r in sequential] == keys
    for a, b in zip(parallel, sequential, strict=True):
        assert (a["packet"], a["reply"], a.get("delta")) == (b["packet"], b["reply"], b.get("delta"))


def test_export_writes_parquet_datasets(micro_data: Path, tmp_path: Path) -> None:
    records = read_records(micro_data)
    counts = export(tmp_path, records)
    assert counts == {"packets": 4, "sft": len(sft_rows(records))}
    sft = load_parquet(tmp_path / "sft.parquet")
    assert [r["key"] for r in sft] == [r["key"] for r in sft_rows(records)]
    assert sft[0]["reply"] == sft_rows(records)[0]["reply"] and sft[0]["spec"]["agent"] == "clumsy"
    assert {"env", "packet", "system", "user", "reply", "delta", "rescued", "broken", "tasks"} <= set(sft[0])
