"""Training data of the engineer: failure packets of many batches, and the cold-start SFT set.

For every environment, ``train_batches`` batches of the ``train`` split and ``valid_batches`` of the
``valid`` split (for model selection; the test split is never touched) are run with the frozen target —
cached baselines, :func:`reharness.measure.baseline.get_baseline` — and turned into failure packets. For
each packet with failures the teacher (``operators`` or any ``llm:`` engineer) proposes ``teacher_k`` patches,
which are measured by paired rerun on the same tasks and seeds; the SFT example of the packet is the best
proposal that is executable and non-degenerate (``status == "ok"``) with Δ_B ≥ 0 (ties: fewer broken, more
rescued, earlier proposal), at most one per packet (REFERENCE.md §1). Its reply is the teacher's raw reply in
Harness-R1's format (``<think>…</think><patch>{json}</patch>``).

**Records.** One JSON line per batch in ``OUT/batches.jsonl``, appended and flushed as soon as the batch is
done, so an interrupted collection resumes where it stopped (a batch already recorded is skipped; a torn
last line is dropped). ``batch_concurrency`` batches run at once (their episodes share the target's model
calls); the file is rewritten in plan order when collection completes, so SFT and GRPO read the same
sequence whatever order the batches finished in. A record holds the batch (env, split, index, seed, run
spec, harness config, task identities and seeds — GRPO reruns exactly these), the packet JSON, the
engineer prompt exactly as :func:`reharness.engineer.prompts.build_messages` builds it (``system``,
``user``), the teacher's measured candidates and, when one was kept, ``reply`` with its Δ_B, success
change, rescued and broken counts.
:func:`export` writes ``packets.parquet`` (every packet with failures) and ``sft.parquet`` (the kept
examples) with Hugging Face ``datasets``. Everything is a function of the config and seeds.

Every teacher candidate row also records its repair ``program`` (the ``operators`` teacher writes one per
proposal, compiling to the same patch), so a tiny engineer that replies in programs is trained on programs
measured on its packet (:func:`program_targets`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.aio import bounded
from reharness.core.errors import ReharnessError, options_error
from reharness.core.hashing import derive_seed, stable_hash
from reharness.core.jsonl import read_jsonl

if TYPE_CHECKING:
    from reharness.engineer.base import Engineer, Proposal
    from reharness.measure.paired import PairedResult
    from reharness.runtime.agents import Agent

RECORDS = "batches.jsonl"
SPLITS = ("train", "valid")
#: batches collected (and, in ``experiment r1``, evaluated) at once by default. The packet stage is bound by
#: the target's model thread, so it gains little (docs/engineer-training.md, "Wall time of --env all");
#: an evaluation batch reruns one patch per method, and several batches give the model fuller passes.
BATCH_CONCURRENCY = 3


class DataConfig(BaseModel):
    """What to collect (validated; written as ``data.json`` next to the records)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    envs: list[str] = Field(min_length=1)
    agent: str = Field("tiny:{env}-S", description="Target agent spec; '{env}' is replaced per environment.")
    teacher: str = Field("operators", description="Engineer spec of the teacher.")
    train_batches: int = Field(16, ge=0)
    valid_batches: int = Field(4, ge=0)
    batch_size: int = Field(10, gt=0)
    teacher_k: int = Field(4, gt=0, le=64)
    max_steps: int | None = Field(None, gt=0, description="Step limit of the target (default: the env's).")
    seed: int = 0
    concurrency: int = Field(8, gt=0, le=256)
    batch_concurrency: int = Field(
        BATCH_CONCURRENCY,
        gt=0,
        le=16,
        description="Batches collected at once (their episodes share model calls).",
    )
    candidate_timeout_s: float | None = Field(1800.0, gt=0)

    @classmethod
    def build(cls, **values: Any) -> DataConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness train engineer") from None

    def agent_for(self, env: str) -> str:
        return self.agent.replace("{env}", env)


def batch_seed(seed: int, env: str, split: str, index: int) -> int:
    """The seed that picks the tasks of batch ``index`` of ``split`` (31 bits)."""
    return derive_seed(seed, "r1-batch", env, split, index) % 2**31


def record_key(env: str, split: str, index: int) -> str:
    return f"{env}/{split}/{index}"


def read_records(out: str | Path) -> list[dict[str, Any]]:
    """The batch records collected so far (a torn last line, from an interrupted write, is ignored)."""
    return [dict(r) for r in read_jsonl(Path(out) / RECORDS)]


def _append(out: Path, record: dict[str, Any]) -> None:
    line = json.dumps(record, sort_keys=True, ensure_ascii=False)
    with (out / RECORDS).open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()


def pick_example(results: list[PairedResult]) -> int | None:
    """Index of the proposal kept for SFT: valid (executable, non-degenerate) with Δ ≥ 0, the best one."""
    eligible = [(i, r) for i, r in enumerate(results) if r.valid and r.delta >= 0]
    if not eligible:
        return None
    return min(eligible, key=lambda x: (-x[1].delta, len(x[1].broken), -len(x[1].rescued), x[0]))[0]


def _teacher_rows(proposals: list[Proposal], results: list[PairedResult]) -> list[dict[str, Any]]:
    return [
        {
            "status": r.status,
            "valid": r.valid,
            "error_code": p.error_code,
            "patch_id": p.patch.identity if p.patch is not None else None,
            "program": p.meta.get("program"),
            "delta": r.delta,
            "rescued": len(r.rescued),
            "broken": len(r.broken),
        }
        for p, r in zip(proposals, results, strict=True)
    ]


def program_targets(record: dict[str, Any], per_packet: int = 1) -> list[dict[str, Any]]:
    """Up to ``per_packet`` repair-program SFT targets of a batch record, best first.

    Each is a teacher candidate *measured on this packet* — valid (executable, non-degenerate), Δ_B ≥ 0,
    ranked like :func:`pick_example` — that has a program (the ``operators`` teacher's proposals do) whose
    compiled patch is the measured one (same identity), distinct by program. ``per_packet=1`` is Harness-R1's
    rule (the kept example only); more gives the tiny engineer several measured repairs of one packet."""
    from reharness.engineer.program import program_patch

    teacher = record.get("teacher") or {}
    rows = [
        (i, c)
        for i, c in enumerate(teacher.get("candidates") or [])
        if c.get("program") and _valid(c) and c["delta"] >= 0
    ]
    rows.sort(key=lambda x: (-x[1]["delta"], x[1]["broken"], -x[1]["rescued"], x[0]))
    out: list[dict[str, Any]] = []
    for _, cand in rows:
        if len(out) >= per_packet or any(t["program"] == cand["program"] for t in out):
            continue
        try:
            patch = program_patch(cand["program"], record["env"])
        except ReharnessError:
            continue
        if patch.identity == cand["patch_id"]:  # the program compiles to exactly the measured patch
            program = patch.metadata["program"]
            out.append({"program": program, "delta": cand["delta"], "patch_id": patch.identity})
    return out


class Collector:
    """Runs the batches of a :class:`DataConfig` and appends their records (see the module docstring)."""

    def __init__(
        self,
        config: DataConfig,
        out: str | Path,
        *,
        agents: Mapping[str, Agent] | None = None,
        teacher: Engineer | None = None,
        on_batch: Callable[[str, dict[str, Any] | None], None] | None = None,
    ) -> None:
        self.config, self.out = config, Path(out)
        self.runs = self.out / "runs"
        self.agents: dict[str, Agent] = dict(agents or {})
        self._own_agents = agents is None
        self.teacher = teacher
        self._own_teacher = teacher is None
        self.on_batch = on_batch or (lambda key, record: None)

    def plan(self) -> list[tuple[str, str, int]]:
        c = self.config
        counts = {"train": c.train_batches, "valid": c.valid_batches}
        return [(env, split, i) for env in c.envs for split in SPLITS for i in range(counts[split])]

    def agent(self, env: str) -> Agent:
        if env not in self.agents:
            from reharness.runtime.agent_specs import make_agent

            self.agents[env] = make_agent(self.config.agent_for(env))
        return self.agents[env]

    async def run(self) -> list[dict[str, Any]]:
        """Collect every planned batch not yet recorded; returns all records (old and new) in plan order."""
        from reharness.engineer.factory import make_engineer

        self.out.mkdir(parents=True, exist_ok=True)
        done = {r["key"]: r for r in read_records(self.out)}
        _rewrite(self.out, list(done.values()))  # drops a torn last line before appending
        if self.teacher is None:
            self.teacher = make_engineer(self.config.teacher)
        todo = []
        for plan in self.plan():
            if record_key(*plan) in done:
                self.on_batch(record_key(*plan), None)
            else:
                todo.append(plan)
        try:
            async for (env, split, index), record in bounded(
                todo, self.config.batch_concurrency, lambda p: self.batch(*p)
            ):
                key = record_key(env, split, index)
                _append(self.out, record)
                done[key] = record
                self.on_batch(key, record)
        finally:
            await self.close()
        if todo:  # batches finish in any order: leave the file in plan order
            _rewrite(self.out, _in_plan_order(list(done.values()), self.config.envs))
        return [done[record_key(*p)] for p in self.plan()]

    async def batch(self, env: str, split: str, index: int) -> dict[str, Any]:
        """Baseline → packet → teacher proposals → paired reruns → one record."""
        from reharness.engineer.prompts import build_messages
        from reharness.failures.packets import extract_packet
        from reharness.measure.baseline import Target, get_baseline
        from reharness.measure.paired import Candidate, evaluate_candidates
        from reharness.runtime import RunSpec, base_harness_config
        from reharness.store.run_store import RunStore

        c = self.config
        harness = base_harness_config(env)
        if c.max_steps is not None:
            harness = harness.model_copy(update={"step_limit": c.max_steps})
        seed = batch_seed(c.seed, env, split, index)
        spec = RunSpec(
            env=env, agent=c.agent_for(env), split=split, n=c.batch_size, seed=seed, concurrency=c.concurrency
        )
        agent = self.agent(env)
        base = await get_baseline(spec, agent, Target(harness), self.runs)
        record: dict[str, Any] = {
            "key": record_key(env, split, index),
            "env": env,
            "split": split,
            "batch_index": index,
            "batch_seed": seed,
            "target_policy": agent.policy_id,
            "spec": spec.model_dump(mode="json"),
            "harness": harness.model_dump(mode="json"),
            "tasks": [
                {"task_id": e.task_id, "task_identity": e.task_identity, "seed": e.seed}
                for e in base.episodes
            ],
            "baseline_success": round(base.result.success_rate, 6),
            "baseline_score": round(base.result.mean_score, 6),
            "packet_id": None,
            "packet": None,
            "reply": None,
        }
        packet = extract_packet(base.episodes, run_meta=RunStore(base.result.out).read_meta())
        record["failures"] = packet.header.failures_found
        if packet.header.failures_found == 0:
            return record
        packet_json = packet.to_json(indent=None)
        system, user = build_messages(packet)
        record |= {
            "packet_id": stable_hash(packet_json),
            "packet": packet_json,
            "system": system.content,
            "user": user.content,
        }
        assert self.teacher is not None
        proposals = await self.teacher.propose(
            packet, c.teacher_k, seed=derive_seed(c.seed, "teacher", record["key"]) % 2**31
        )
        candidates = [Candidate.of(f"t{i}", p) for i, p in enumerate(proposals)]
        results = await evaluate_candidates(
            candidates,
            base,
            agent,
            self.runs,
            timeout_s=c.candidate_timeout_s,
            evidence=packet.leakage_evidence(),
        )
        kept = pick_example(results)
        record["teacher"] = {
            "engineer": self.teacher.name,
            "candidates": _teacher_rows(proposals, results),
            "kept": kept,
        }
        if kept is not None:
            best, proposal = results[kept], proposals[kept]
            record |= {
                "reply": proposal.raw_reply,
                "patch_id": proposal.patch.identity if proposal.patch is not None else None,
                "delta": best.delta,
                "success_delta": best.success_delta,
                "rescued": len(best.rescued),
                "broken": len(best.broken),
            }
        return record

    async def close(self) -> None:
        if self._own_teacher and self.teacher is not None:
            await self.teacher.close()
        if self._own_agents:
            for agent in self.agents.values():
                await agent.close()


def _rewrite(out: Path, records: list[dict[str, Any]]) -> None:
    lines = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)
    (out / RECORDS).write_text(lines, encoding="utf-8")


def _in_plan_order(records: list[dict[str, Any]], envs: list[str]) -> list[dict[str, Any]]:
    """Records sorted as a sequential collection writes them: env (config order), split, batch index."""
    rank = {env: i for i, env in enumerate(envs)}
    for record in records:
        rank.setdefault(record["env"], len(rank))
    splits = {split: i for i, split in enumerate(SPLITS)}
    return sorted(
        records, key=lambda r: (rank[r["env"]], splits.get(r["split"], len(splits)), r["batch_index"])
    )


def packet_rows(records: list[dict[str, Any]], split: str | None = None) -> list[dict[str, Any]]:
    """Records with a packet (failures found), optionally of one split."""
    return [r for r in records if r.get("packet") and (split is None or r["split"] == split)]


def contested(record: dict[str, Any]) -> bool:
    """Whether the teacher's measured candidates of a packet scored differently (GRPO's reward: Δ_B of a
    valid patch, 0 otherwise). A packet on which every measured repair scores the same — on db mostly every
    one 0, the tiny agent ignoring hints — rarely gives a GRPO group reward variance, so no gradient."""
    candidates = (record.get("teacher") or {}).get("candidates") or []
    return len({float(c.get("delta") or 0.0) if _valid(c) else 0.0 for c in candidates}) > 1


def _valid(candidate: dict[str, Any]) -> bool:
    """A recorded teacher candidate's patch was valid (records written before ``valid`` existed: ``ok``)."""
    return bool(candidate.get("valid", candidate.get("status") == "ok"))


def sft_rows(records: list[dict[str, Any]], split: str | None = None) -> list[dict[str, Any]]:
    """Records with a kept teacher reply (the SFT examples), optionally of one split."""
    return [r for r in packet_rows(records, split) if r.get("reply")]


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    """A Parquet row: nested config objects as JSON strings, numbers as floats."""
    row = {k: v for k, v in record.items() if k not in ("spec", "harness", "teacher")}
    row["spec"] = json.dumps(record["spec"], sort_keys=True)
    row["harness"] = json.dumps(record["harness"], sort_keys=True)
    row["teacher"] = json.dumps(record.get("teacher"), sort_keys=True)
    for name in ("delta", "success_delta"):
        row[name] = float(record.get(name) or 0.0)
    for name in ("rescued", "broken"):
        row[name] = int(record.get(name) or 0)
    row["patch_id"] = record.get("patch_id")
    return row


def export(out: str | Path, records: list[dict[str, Any]]) -> dict[str, int]:
    """Write ``packets.parquet`` and ``sft.parquet`` (Hugging Face ``datasets``); returns row counts."""
    import datasets

    datasets.disable_progress_bars()
    out = Path(out)
    counts = {}
    for name, rows in (("packets", packet_rows(records)), ("sft", sft_rows(records))):
        path = out / f"{name}.parquet"
        path.unlink(missing_ok=True)
        if rows:
            datasets.Dataset.from_list([_flat(r) for r in rows]).to_parquet(str(path))
        counts[name] = len(rows)
    return counts


def load_parquet(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an exported Parquet file, with ``spec``/``harness``/``teacher`` parsed back."""
    import datasets

    rows = datasets.Dataset.from_parquet(str(path)).to_list()
    for row in rows:
        for name in ("spec", "harness", "teacher"):
            row[name] = json.loads(row[name]) if row.get(name) else None
    return rows
