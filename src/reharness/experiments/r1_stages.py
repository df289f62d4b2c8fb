"""The stages of ``reharness experiment r1`` (see :mod:`.r1` for the whole protocol): the validated config,
the result rows, training (:func:`train`), the held-out evaluation (:class:`Evaluator`) and the aggregation
(:func:`aggregate`). Shared by the orchestration (:mod:`.r1`), the studies (:mod:`.r1_studies`) and the
report (:mod:`.r1_report`), none of which the stages import.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reharness.core.aio import bounded
from reharness.core.errors import options_error
from reharness.core.hashing import derive_seed
from reharness.core.jsonl import read_jsonl
from reharness.training.data import BATCH_CONCURRENCY

if TYPE_CHECKING:
    from reharness.engineer.base import Engineer, Proposal
    from reharness.failures.packets import FailurePacket
    from reharness.measure.baseline import Baseline
    from reharness.runtime.agents import Agent

T = TypeVar("T")
METHODS: tuple[str, ...] = ("none", "self-refine", "operators", "sft", "grpo")
EVAL_FILE = "eval.jsonl"


#: GRPO sampling temperature of a program engineer under the grammar: every reply compiles whatever the
#: temperature, and on the same ALFWorld-like train packets 1.2 gave reward variance in 8 of the first 9
#: groups against 2 of 9 at 0.7 (docs/engineer-training.md); unconstrained, 0.7 (Harness-R1's) keeps
#: most replies valid
GRPO_TEMPERATURE_CONSTRAINED = 1.2
GRPO_TEMPERATURE = 0.7


class R1Config(BaseModel):
    """Options of ``reharness experiment r1`` (validated; written to ``OUT/r1_config.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _grpo_temperature(cls, values: Any) -> Any:
        """An unset GRPO temperature follows the grammar option (see GRPO_TEMPERATURE_CONSTRAINED)."""
        if isinstance(values, dict) and values.get("grpo_temperature") is None:
            constrained = values.get("grpo_constrain", True) and values.get("language") != "hooks"
            values = values | {
                "grpo_temperature": GRPO_TEMPERATURE_CONSTRAINED if constrained else GRPO_TEMPERATURE
            }
        return values

    envs: list[str] = Field(min_length=1)
    agent: str = Field("tiny:{env}-S", description="Frozen target; '{env}' is replaced per environment.")
    out: str = "r1"
    teacher: str = "operators"
    batches: int = Field(16, gt=0, description="Train batches per environment.")
    valid_batches: int = Field(4, ge=0)
    batch_size: int = Field(10, gt=0)
    teacher_k: int = Field(4, gt=0)
    max_steps: int | None = Field(None, gt=0)
    size: Literal["S", "micro"] = "S"
    sft_steps: int = Field(300, gt=0)
    grpo_steps: int = Field(20, gt=0)
    k: int = Field(4, ge=2)
    max_new_tokens: int = Field(1536, gt=0)
    max_prompt_chars: int = Field(1500, gt=200)
    language: Literal["hooks", "program"] | None = Field(
        None, description="Reply language of the tiny engineer (None: program; 'hooks': hook code)."
    )
    per_packet: int | None = Field(None, ge=1, le=16, description="SFT program targets per packet (2).")
    resample_invalid: int | None = Field(
        None,
        ge=0,
        le=64,
        description="Learned engineers at evaluation: resample a reply that fails the static checks up to N "
        "times (None: 8 for repair programs, 0 for hook code; 0: one sample).",
    )
    constrain: bool = Field(
        True, description="Learned program engineers decode under the program grammar (in-process models)."
    )
    packet_views: int = Field(
        1, ge=1, le=8, description="SFT prompts per program target: the packet's traces in rotated orders."
    )
    test_batches: int = Field(6, gt=0, description="Held-out (test split) batches per environment.")
    temperature: float = Field(
        0.7, ge=0, description="Sampling temperature of the learned engineers at evaluation (0: greedy)."
    )
    grpo_temperature: float = Field(
        GRPO_TEMPERATURE_CONSTRAINED,
        gt=0,
        description="Sampling temperature of the GRPO rollouts (default 1.2 under the grammar; 0.7, "
        "Harness-R1's, without it).",
    )
    grpo_constrain: bool = Field(
        True,
        description="GRPO samples a program engineer's replies under the program grammar too (every "
        "reply compiles, so a group's rewards differ by what its programs do).",
    )
    grpo_packets: Literal["all", "contested"] = Field(
        "contested",
        description="GRPO's packet stream: the train packets whose teacher candidates scored differently "
        "(contested), or all of them.",
    )
    packets_per_step: int = Field(1, gt=0, description="GRPO packets per optimizer step (Harness-R1: 4).")
    grpo_learning_rate: float = Field(1e-5, gt=0, description="GRPO learning rate (Harness-R1 9B: 1e-6).")
    seed: int = 0
    concurrency: int = Field(8, gt=0)
    batch_concurrency: int = Field(
        BATCH_CONCURRENCY, gt=0, le=16, description="Batches collected or evaluated at once."
    )
    transfer_agent: str | None = Field(None, description="Unseen target for the transfer study (None: skip).")
    generalisation_seeds: int = Field(3, ge=0, description="Seeds of the held-out generalisation (0: skip).")
    heldout_n: int = Field(50, gt=0, description="Held-out tasks a generalisation patch is measured on.")
    ablation: bool = Field(True, description="Hook ablation of the GRPO engineer's patches.")

    @classmethod
    def build(cls, **values: Any) -> R1Config:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness experiment r1") from None


class R1Row(BaseModel):
    method: str
    env: str
    success: float
    ci_low: float
    ci_high: float
    broken: int
    rescued: int = 0
    valid_patches: int = 0
    first_sample_valid: int = 0
    batches: int = 0
    n: int = 0


class R1Result(BaseModel):
    config: R1Config
    rows: list[R1Row]
    average: dict[str, float]
    training: dict[str, Any] = Field(default_factory=dict)
    transfer: list[R1Row] = Field(default_factory=list)
    transfer_average: dict[str, float] = Field(default_factory=dict)
    generalisation: dict[str, Any] = Field(default_factory=dict)
    ablation: dict[str, float] = Field(default_factory=dict)

    def contract(self) -> dict[str, Any]:
        """The ``--json`` output: ``{rows: [{method, env, success, ci_low, ci_high, broken}], average}``."""
        keys = ("method", "env", "success", "ci_low", "ci_high", "broken")
        return {"rows": [{k: getattr(r, k) for k in keys} for r in self.rows], "average": self.average}


def train(
    config: R1Config,
    agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
    progress: Any = None,
) -> dict[str, Any]:
    """Stage 1: collect packets, SFT, GRPO into ``OUT/train`` (stages already done are loaded)."""
    from reharness.training.data import Collector, DataConfig, export
    from reharness.training.grpo import GRPOStageConfig, run_grpo
    from reharness.training.sft import SFTStageConfig, run_sft

    c, root = config, Path(config.out) / "train"
    data = DataConfig(
        envs=c.envs, agent=c.agent, teacher=c.teacher, train_batches=c.batches,
        valid_batches=c.valid_batches, batch_size=c.batch_size, teacher_k=c.teacher_k, max_steps=c.max_steps,
        seed=c.seed, concurrency=c.concurrency, batch_concurrency=c.batch_concurrency,
    )  # fmt: skip
    notify(f"train: packets of {c.batches} train batches per environment")
    records = asyncio.run(Collector(data, root / "data", agents=agents).run())
    export(root / "data", records)
    summaries = {}
    for stage in ("sft", "grpo"):
        info = _engineer_info(root / stage)
        if info.get("stage") == stage:
            notify(f"train: {stage} engineer found in {root / stage}")
        elif stage == "sft":
            notify(f"train: SFT of the tiny engineer ({c.sft_steps} steps)")
            sft = SFTStageConfig(
                data=str(root / "data"), out=str(root / "sft"), size=c.size, steps=c.sft_steps,
                max_new_tokens=c.max_new_tokens, max_prompt_chars=c.max_prompt_chars, seed=c.seed,
                language=c.language, per_packet=c.per_packet, packet_views=c.packet_views,
            )  # fmt: skip
            info = run_sft(sft, progress=progress)
        else:
            notify(f"train: GRPO ({c.grpo_steps} steps, k={c.k})")
            grpo = GRPOStageConfig(
                data=str(root / "data"), sft=str(root / "sft"), out=str(root / "grpo"), k=c.k,
                steps=c.grpo_steps, save_steps=max(1, c.grpo_steps // 4), seed=c.seed,
                temperature=c.grpo_temperature, packets_per_step=c.packets_per_step,
                learning_rate=c.grpo_learning_rate,
                constrain=c.grpo_constrain and c.language != "hooks", packets=c.grpo_packets,
            )  # fmt: skip
            info = run_grpo(grpo, agents=agents, progress=progress)
        summaries[stage] = {k: v for k, v in info.items() if k != "config"}
    return summaries


def _engineer_info(path: Path) -> dict[str, Any]:
    file = path / "engineer.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


def make_method(
    name: str,
    train_dir: Path,
    temperature: float = 0.7,
    resample_invalid: int | None = None,
    constrain: bool = True,
) -> Engineer | None:
    """The engineer of a method (``None`` for ``none``); learned engineers sample at ``temperature`` and
    resample invalid replies (:class:`~reharness.engineer.llm.LLMEngineer`)."""
    from reharness.engineer.factory import make_engineer

    if name == "none":
        return None
    if name in ("sft", "grpo"):
        return make_engineer(
            f"hf:{train_dir / name}",
            temperature=temperature,
            resample_invalid=resample_invalid,
            constrain=constrain,
        )
    return make_engineer(name)


class Evaluator:
    """Stage 2: held-out batches × methods, one record per (env, batch, method) in ``eval.jsonl``."""

    def __init__(
        self,
        config: R1Config,
        agents: Mapping[str, Agent] | None,
        notify: Callable[[str], None],
        *,
        agent_spec: str | None = None,
        out: Path | None = None,
        progress: Callable[[str, int, int, dict[str, float]], None] | None = None,
    ) -> None:
        self.config, self.notify, self.progress = config, notify, progress
        self.agent_spec = agent_spec or config.agent
        self.out = out or Path(config.out)
        self.train_dir = Path(config.out) / "train"
        self.agents: dict[str, Agent] = dict(agents or {})
        self._own_agents = agents is None
        self.engineers: dict[str, Engineer | None] = {}

    def agent(self, env: str) -> Agent:
        if env not in self.agents:
            from reharness.models.registry import make_agent

            self.agents[env] = make_agent(self.agent_spec.replace("{env}", env))
        return self.agents[env]

    async def run(self) -> list[dict[str, Any]]:
        path = self.out / EVAL_FILE
        done = load_records(path)
        n = self.config.test_batches
        todo = [
            (env, index)
            for env in self.config.envs
            for index in range(n)
            if not all(f"{env}/{index}/{m}" in done for m in METHODS)
        ]

        finished = [0]

        async def one(batch: tuple[str, int]) -> list[dict[str, Any]]:
            self.notify(f"evaluate: {batch[0]} test batch {batch[1] + 1}/{n}")
            records = await self.batch(*batch, done)
            finished[0] += 1
            if self.progress is not None:  # the CLI's bar over the test batches left, with an eta
                self.progress("evaluate (test batches)", finished[0], len(todo), {})
            return records

        try:
            await record_units(todo, self.config.batch_concurrency, one, done, path)
        finally:
            await self.close()
        return list(done.values())

    async def close(self) -> None:
        """Close the engineers, and the agents this evaluator built."""
        for engineer in self.engineers.values():
            if engineer is not None:
                await engineer.close()
        self.engineers.clear()
        if self._own_agents:
            for agent in self.agents.values():
                await agent.close()
            self.agents.clear()

    async def baseline(
        self, env: str, split_tag: str, index: int, n: int | None = None, max_traces: int = 20
    ) -> tuple[Baseline, FailurePacket]:
        """The target's (cached) baseline of a test-split batch and its failure packet.

        ``split_tag`` names the batch family (``test`` for the main table) so studies draw other batches."""
        from reharness.failures.packets import extract_packet
        from reharness.measure.baseline import Target, get_baseline
        from reharness.runtime import RunSpec, base_harness_config
        from reharness.store.run_store import RunStore
        from reharness.training.data import batch_seed

        c = self.config
        harness = base_harness_config(env)
        if c.max_steps is not None:
            harness = harness.model_copy(update={"step_limit": c.max_steps})
        spec = RunSpec(
            env=env, agent=self.agent_spec.replace("{env}", env), split="test", n=n or c.batch_size,
            seed=batch_seed(c.seed, env, split_tag, index), concurrency=c.concurrency,
        )  # fmt: skip
        base = await get_baseline(spec, self.agent(env), Target(harness), self.out / "runs")
        meta = RunStore(base.result.out).read_meta()
        return base, extract_packet(base.episodes, run_meta=meta, max_traces=max_traces)

    async def propose(self, method: str, packet: FailurePacket, seed: int) -> Proposal:
        """One proposal of ``method`` (engineers are built once and closed by :meth:`run`)."""
        if method not in self.engineers:
            self.engineers[method] = make_method(
                method,
                self.train_dir,
                self.config.temperature,
                self.config.resample_invalid,
                self.config.constrain,
            )
        engineer = self.engineers[method]
        assert engineer is not None
        return (await engineer.propose(packet, 1, seed=derive_seed(seed, method) % 2**31))[0]

    async def batch(self, env: str, index: int, done: dict[str, Any]) -> list[dict[str, Any]]:
        from reharness.measure.paired import Candidate, evaluate_candidates

        base, packet = await self.baseline(env, "test", index)
        seed = base.spec.seed
        methods = [m for m in METHODS if f"{env}/{index}/{m}" not in done]
        # every method's patch at once: their reruns share the target's model calls
        patching = [m for m in methods if m != "none" and packet.header.failures_found]
        written = await asyncio.gather(*(self.propose(m, packet, seed) for m in patching))
        proposals = dict(zip(patching, written, strict=True))
        measured = await evaluate_candidates(
            [Candidate.of(m, p) for m, p in proposals.items()],
            base,
            self.agent(env),
            self.out / "runs",
            evidence=packet.leakage_evidence(),
        )
        results = {r.candidate_id: r for r in measured}
        records = []
        for method in methods:
            key = f"{env}/{index}/{method}"
            record: dict[str, Any] = {"key": key, "env": env, "batch": index, "method": method, "seed": seed}
            record |= {"status": "none", "valid": False, "rescued": [], "broken": [], "patch_id": None}
            if method in results:
                proposal, result = proposals[method], results[method]
                record |= {
                    "status": result.status,
                    "valid": result.valid,
                    "reason": (result.reason or "")[:300] or None,
                    "rescued": result.rescued,
                    "broken": result.broken,
                    "patch_id": proposal.patch.identity if proposal.patch else None,
                    "attempts": proposal.meta.get("attempts", 1),
                    "patch": proposal.patch.to_dict() if proposal.patch and result.valid else None,
                }
            record["successes"] = patched_successes(base, record["rescued"], record["broken"])
            records.append(record)
        return records


def patched_successes(base: Baseline, rescued: Iterable[str], broken: Iterable[str]) -> list[float]:
    """Success per task of ``base`` (its order) under a patch that rescued and broke the tasks named."""
    flips = {t: 1.0 for t in rescued} | {t: 0.0 for t in broken}
    return [flips.get(e.task_id, float(e.success)) for e in base.episodes]


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one finished record to a resumable JSON-lines file (see :func:`load_records`)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


async def record_units(
    units: list[T],
    limit: int,
    work: Callable[[T], Awaitable[list[dict[str, Any]]]],
    done: dict[str, dict[str, Any]],
    path: Path,
) -> None:
    """Run ``work`` on each unit (``limit`` at once) and record every record it returns as soon as the unit
    finishes: into ``done`` by key and appended to ``path``, so an interrupted stage resumes."""
    async for _, records in bounded(units, limit, work):
        for record in records:
            done[record["key"]] = record
            append_record(path, record)


def aggregate(config: R1Config, records: list[dict[str, Any]]) -> tuple[list[R1Row], dict[str, float]]:
    """Rows per (method, env) in method order, and the per-method average over environments."""
    from reharness.measure.paired import bootstrap_ci

    rows = []
    for method in METHODS:
        for env in config.envs:
            mine = sorted(
                (r for r in records if r["method"] == method and r["env"] == env), key=lambda r: r["batch"]
            )  # batch order, whatever order they were evaluated in
            values = [v for r in mine for v in r["successes"]]
            low, high = bootstrap_ci(values, seed=config.seed)
            rows.append(
                R1Row(
                    method=method,
                    env=env,
                    success=round(sum(values) / max(1, len(values)), 6),
                    ci_low=low,
                    ci_high=high,
                    broken=sum(len(r["broken"]) for r in mine),
                    rescued=sum(len(r["rescued"]) for r in mine),
                    valid_patches=sum(bool(r["valid"]) for r in mine),
                    first_sample_valid=sum(bool(r["valid"]) and r.get("attempts", 1) == 1 for r in mine),
                    batches=len(mine),
                    n=len(values),
                )
            )
    average = {m: round(sum(r.success for r in rows if r.method == m) / len(config.envs), 6) for m in METHODS}
    return rows, average


def load_records(path: Path) -> dict[str, dict[str, Any]]:
    """The finished records of a resumable JSONL file, by ``key``; a torn last line (an interrupted write)
    ends the read and is dropped from the file, which is rewritten with the records kept."""
    done: dict[str, dict[str, Any]] = {r["key"]: r for r in read_jsonl(path)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in done.values()), "utf-8")
    return done
