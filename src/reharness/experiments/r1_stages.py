"""The stages of ``reharness experiment r1`` (see :mod:`.r1` for the whole protocol): the validated config,
the result rows, training (:func:`train`) and the aggregation (:func:`aggregate`); the held-out evaluation
is in :mod:`.r1_eval`. Shared by the orchestration (:mod:`.r1`), the studies (:mod:`.r1_studies`) and the
report (:mod:`.r1_report`), none of which the stages import.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reharness.core.errors import ConfigError, options_error
from reharness.training.data import BATCH_CONCURRENCY

if TYPE_CHECKING:
    from reharness.runtime.agents import Agent

METHODS: tuple[str, ...] = ("none", "self-refine", "operators", "sft", "grpo")
#: the control rows (:mod:`.r1_controls`), evaluated after METHODS when ``R1Config.controls``
CONTROLS: tuple[str, ...] = ("grpo-shuffled", "placebo", "placebo-text", "best-of-n")
#: the prompted editor's row (a model prompted to edit the harness), evaluated when ``R1Config.editor`` is set
PROMPTED = "prompted"
#: the learned engineers: model directories under ``OUT/train``
LEARNED: tuple[str, ...] = ("sft", "grpo", "grpo-shuffled")
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
    grpo_select: Literal["last", "valid"] = Field(
        "valid",
        description="GRPO engineer kept: the step (SFT, a checkpoint per step up to 20 of them, the last) "
        "with the best greedy mean Δ on the valid packets, ties to the later; or the last step.",
    )
    seed: int = 0
    test_seed: int | None = Field(
        None,
        description="Seed of the test-split batches (main table and studies); None: --seed. Give every "
        "training seed the same value to evaluate independent training runs on the same tasks.",
    )
    concurrency: int = Field(8, gt=0)
    batch_concurrency: int = Field(
        BATCH_CONCURRENCY, gt=0, le=16, description="Batches collected or evaluated at once."
    )
    transfer_agent: str | None = Field(None, description="Unseen target for the transfer study (None: skip).")
    generalisation_seeds: int = Field(3, ge=0, description="Seeds of the held-out generalisation (0: skip).")
    heldout_n: int = Field(50, gt=0, description="Held-out tasks a generalisation patch is measured on.")
    ablation: bool = Field(True, description="Hook ablation of the GRPO engineer's patches.")
    hint_probe: bool = Field(True, description="Probe whether the target follows a hint naming its action.")
    controls: bool = Field(
        True, description="The control rows: GRPO on shuffled rewards, a placebo patch, best-of-N search."
    )
    editor: str | None = Field(
        None,
        description="A model prompted to edit the harness (Harness-R1's prompted-editor row, method "
        "'prompted'): a backend spec such as pretrained:smollm2-135m or openai:MODEL@URL; None: no row.",
    )
    editor_language: Literal["hooks", "program"] = Field(
        "hooks",
        description="What the prompted editor writes: free hook code (hooks; Harness-R1's full prompt unless "
        "editor_prompt says compact) or a repair program from the compact prompt (program).",
    )
    editor_prompt: Literal["full", "compact"] | None = Field(
        None,
        description="How the prompted editor is asked: Harness-R1's full prompt or the compact one (a small "
        "context needs it); None: full for hook code, compact for a repair program.",
    )
    editor_constrain: bool = Field(
        False, description="Prompted editor in the program language: decode under the program grammar."
    )
    editor_max_tokens: int = Field(1024, gt=0, description="Reply budget of the prompted editor (tokens).")

    @model_validator(mode="after")
    def _editor_options(self) -> R1Config:
        if self.editor is not None:
            from reharness.core.errors import ReharnessError
            from reharness.models.registry import check_spec

            try:  # a bad spec fails before any work
                check_spec(self.editor)
            except ReharnessError as exc:
                raise type(exc)(f"--editor {self.editor!r}: {exc.message}", hint=exc.hint) from None
        if self.editor_prompt == "full" and self.editor_language == "program":
            raise ConfigError(
                "--editor-prompt full asks for hook code; a repair program needs the compact prompt",
                hint="drop --editor-prompt, or give --editor-language hooks",
            )
        if self.editor_constrain and self.editor_language != "program":
            raise ConfigError(
                "--editor-constrain needs --editor-language program (the grammar is the repair programs')",
                hint="see `reharness experiment r1 --help`",
            )
        return self

    @property
    def evaluation_seed(self) -> int:
        """The seed that picks the test-split tasks (``test_seed``, else ``seed``)."""
        return self.seed if self.test_seed is None else self.test_seed

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
    #: how the method's patches fared before any rerun: batches whose reply did not parse, whose patch failed
    #: the checks, whose patch was degenerate; the error codes of the refused ones
    parse_failures: int = 0
    validation_failures: int = 0
    degenerate: int = 0
    error_codes: dict[str, int] = Field(default_factory=dict)
    #: tasks of the batches whose patch was valid, and their net flips (rescued − broken)
    valid_tasks: int = 0
    valid_net: int = 0


def main_methods(config: R1Config) -> tuple[str, ...]:
    """The methods of the main table: Harness-R1's five, the prompted editor when one is given, then the
    controls when they are on."""
    return METHODS + ((PROMPTED,) if config.editor else ()) + (CONTROLS if config.controls else ())


class R1Result(BaseModel):
    config: R1Config
    rows: list[R1Row]
    average: dict[str, float]
    comparisons: list[dict[str, Any]] = Field(default_factory=list)
    controls: dict[str, Any] = Field(default_factory=dict)
    training: dict[str, Any] = Field(default_factory=dict)
    transfer: list[R1Row] = Field(default_factory=list)
    transfer_average: dict[str, float] = Field(default_factory=dict)
    generalisation: dict[str, Any] = Field(default_factory=dict)
    ablation: dict[str, float] = Field(default_factory=dict)
    hook_effects: list[dict[str, Any]] = Field(default_factory=list)
    hint_probe: dict[str, Any] = Field(default_factory=dict)

    def contract(self) -> dict[str, Any]:
        """The ``--json`` output: ``{rows: [{method, env, success, ci_low, ci_high, broken}], average,
        comparisons: [{a, b, env, delta, ci_low, ci_high, n, verdict}]}`` (paired, :mod:`.r1_compare`)."""
        keys = ("method", "env", "success", "ci_low", "ci_high", "broken")
        rows = [{k: getattr(r, k) for k in keys} for r in self.rows]
        return {"rows": rows, "average": self.average, "comparisons": self.comparisons}


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
    for stage in ("sft", "grpo", *(("grpo-shuffled",) if c.controls else ())):
        info = _engineer_info(root / stage)
        if info.get("stage") == stage.split("-")[0]:
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
            control = "shuffled" if stage == "grpo-shuffled" else "none"
            notify(f"train: GRPO ({c.grpo_steps} steps, k={c.k}, reward control: {control})")
            grpo = GRPOStageConfig(
                data=str(root / "data"), sft=str(root / "sft"), out=str(root / stage), k=c.k,
                reward_control=control,
                steps=c.grpo_steps, save_steps=grpo_save_steps(c), seed=c.seed, select=c.grpo_select,
                temperature=c.grpo_temperature, packets_per_step=c.packets_per_step,
                learning_rate=c.grpo_learning_rate,
                constrain=c.grpo_constrain and c.language != "hooks", packets=c.grpo_packets,
            )  # fmt: skip
            info = run_grpo(grpo, agents=agents, progress=progress)
        summaries[stage] = {k: v for k, v in info.items() if k != "config"}
    return summaries


def grpo_save_steps(config: R1Config) -> int:
    """Checkpoint interval of GRPO: every step (at most 20 checkpoints) when ``valid`` selects among them,
    else four checkpoints (for resuming)."""
    if config.grpo_select == "valid":
        return max(1, -(-config.grpo_steps // 20))
    return max(1, config.grpo_steps // 4)


def _engineer_info(path: Path) -> dict[str, Any]:
    file = path / "engineer.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


def _reply_funnel(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Parse / validation / degenerate counts, error codes and the valid patches' net flips of one row's
    records (``rejected_at`` is recorded since the prompted-editor row; older records count as validation)."""
    from reharness.engineer.base import PARSE

    codes: Counter[str] = Counter()
    stages = ("parse_failures", "validation_failures", "degenerate", "valid_tasks", "valid_net")
    funnel = dict.fromkeys(stages, 0)
    for r in records:
        if r["status"] == "invalid":
            funnel["parse_failures" if r.get("rejected_at") == PARSE else "validation_failures"] += 1
            codes[r.get("error_code") or "invalid"] += 1
        elif r["status"] == "degenerate":
            funnel["degenerate"] += 1
        if r["valid"]:
            funnel["valid_tasks"] += len(r["successes"])
            funnel["valid_net"] += len(r["rescued"]) - len(r["broken"])
    return funnel | {"error_codes": dict(sorted(codes.items()))}


def aggregate(
    config: R1Config, records: list[dict[str, Any]], methods: tuple[str, ...] | None = None
) -> tuple[list[R1Row], dict[str, float]]:
    """Rows per (method, env) in method order (default: the main table's), and the per-method average over
    environments."""
    from reharness.measure.paired import bootstrap_ci

    methods = methods or main_methods(config)
    rows = []
    for method in methods:
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
                    **_reply_funnel(mine),
                )
            )
    average = {m: round(sum(r.success for r in rows if r.method == m) / len(config.envs), 6) for m in methods}
    return rows, average
