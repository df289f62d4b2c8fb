"""Outcome-based GRPO of the engineer with TRL's ``GRPOTrainer`` (Harness-R1 stage 2).

Each optimizer step samples ``k`` replies for each of ``packets_per_step`` train packets (temperature 0.7,
top-p 0.95; with ``constrain``, under the repair-program grammar: :mod:`.constrained_rollout`), scores
every reply by paired rerun on its packet's batch (:class:`.rerun.PairedRerunReward`: same tasks and seeds,
one cached baseline, invalid ⇒ 0), normalises rewards within each packet's group
(``scale_rewards="group"``: advantage (r − μ)/σ shared by all tokens of a reply) and takes one clipped
token-mean surrogate step (``loss_type="dapo"``) with asymmetric clipping ε_low 0.20 / ε_high 0.28 and no KL
term (``beta=0``), on-policy (one iteration per generation). All of these are fields of
:class:`GRPOStageConfig`, validated; the resolved config is written to the output directory.

The engineer starts from the SFT model directory (``--stage sft``) and keeps its prompt style. Checkpoints
are saved every ``save_steps`` under ``OUT/checkpoints`` and a rerun of the same command resumes from the
last one; patched reruns are stored under ``runs_dir`` (by default the data directory's ``runs``, where the
baselines already are), so a resumed step loads the reruns it already paid for. Rewards per step are in
``engineer.json`` (``reward_curve``), with the share of valid samples (``valid_frac_curve``) and of groups
with non-zero reward variance (``variance_frac_curve``) per step, every scored reply in ``rewards.jsonl``,
and with ``report_to: ["tensorboard"]`` TRL logs the curves to ``OUT/checkpoints/runs``. ``timing`` gives the
wall time per step and the share of it spent in paired reruns (the rest: generation and the policy update).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reharness.core.errors import ConfigError, DataError, options_error
from reharness.engineer.compact import ENGINEER_FILE, PromptStyle
from reharness.training.resume import resume_training


class GRPOStageConfig(BaseModel):
    """Options of ``reharness train engineer --stage grpo`` (validated, frozen, written to the out dir)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: str = Field(description="Directory of collected records (batches.jsonl).")
    sft: str = Field(description="Model directory of the SFT engineer to start from.")
    out: str
    envs: list[str] | None = Field(None, description="Only packets of these environments (default: all).")
    k: int = Field(8, ge=2, le=64, description="Completions per packet (num_generations).")
    packets_per_step: int = Field(1, gt=0, description="Packets per optimizer step.")
    steps: int = Field(20, gt=0)
    learning_rate: float = Field(
        1e-5,
        gt=0,
        description="Tiny engineer: 1e-5 (1e-4 raised entropy and lost valid replies); R1 9B: 1e-6.",
    )
    temperature: float = Field(0.7, gt=0)
    packets: Literal["all", "contested"] = Field(
        "all",
        description="The train packets GRPO samples: all, or only those whose teacher candidates scored "
        "differently (reharness.training.data.contested; all of them when none did).",
    )
    top_p: float = Field(0.95, gt=0, le=1)
    reward_control: Literal["none", "shuffled"] = Field(
        "none",
        description="shuffled: each group's measured rewards permuted across its completions (seeded) — "
        "the same reruns and compute with no signal, a control (reharness.training.rerun).",
    )
    constrain: bool = Field(
        False,
        description="Sample the replies of a repair-program engineer under the program grammar, as at "
        "evaluation (reharness.training.constrained_rollout).",
    )
    epsilon: float = Field(0.2, gt=0, lt=1, description="Lower clip range.")
    epsilon_high: float = Field(0.28, gt=0, lt=1, description="Upper clip range (asymmetric, DAPO).")
    beta: float = Field(0.0, ge=0, description="KL coefficient; Harness-R1 uses none (0).")
    loss_type: Literal["dapo", "grpo", "dr_grpo", "bnpo"] = "dapo"
    scale_rewards: Literal["group", "batch", "none"] = "group"
    max_new_tokens: int | None = Field(None, gt=0, description="Default: the SFT engineer's reply budget.")
    save_steps: int = Field(10, gt=0)
    runs_dir: str | None = Field(None, description="Where reruns are stored (default: DATA/runs).")
    rerun_timeout_s: float | None = Field(1800.0, gt=0)
    seed: int = 0
    report_to: list[str] = Field(default_factory=list, description="e.g. ['tensorboard'].")
    select_on_valid: bool = Field(
        True, description="Score the SFT start and the result on the valid packets (greedy, paired rerun)."
    )
    select: Literal["last", "valid"] = Field(
        "last",
        description="The engineer kept: the last step, or the step (SFT, each checkpoint, the last) with the "
        "best greedy mean Δ on the valid packets, ties to the later (reharness.training.grpo_select).",
    )
    device: Literal["cpu", "cuda"] = Field("cpu", description="cuda: GPUs through accelerate (bf16 advised).")
    bf16: bool = Field(False, description="bfloat16 training (GPUs only).")
    use_vllm: bool = Field(False, description="Generate completions with vLLM (GPUs only).")
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_server_base_url: str | None = Field(None, description="vllm_mode=server: the trl vllm-serve URL.")

    @model_validator(mode="after")
    def _clip_order(self) -> GRPOStageConfig:
        if self.epsilon_high < self.epsilon:
            raise ValueError(f"epsilon_high ({self.epsilon_high}) must be >= epsilon ({self.epsilon})")
        if self.device == "cpu" and (self.bf16 or self.use_vllm):
            raise ValueError(
                "bf16 and use_vllm need device='cuda' (on a CPU train in float32, generate with HF)"
            )
        return self

    @classmethod
    def build(cls, **values: Any) -> GRPOStageConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness train engineer") from None


def check_sft_dir(path: str | Path) -> dict[str, Any]:
    """The engineer info of an SFT model directory, or a :class:`ConfigError` that names the fix."""
    import json

    root = Path(path).expanduser()
    file = root / ENGINEER_FILE
    if not (root / "config.json").is_file() or not file.is_file():
        raise ConfigError(
            f"no SFT engineer in {str(root)!r} (needs config.json and {ENGINEER_FILE})",
            hint="train one first: reharness train engineer --stage sft --out DIR, then pass --sft DIR",
        )
    info: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return info


#: GRPO's reply budget (tokens) when neither the stage nor its SFT engineer names one
DEFAULT_REPLY_TOKENS = 1024


def reply_budget(config: GRPOStageConfig, sft_info: dict[str, Any] | None) -> int:
    """GRPO's reply budget: the stage's ``max_new_tokens``, else the one its SFT engineer was trained for
    (``sft_info``: :func:`check_sft_dir`'s answer, None when there is no SFT engineer yet), else
    :data:`DEFAULT_REPLY_TOKENS`. The trainer and ``--dry-run`` both ask here."""
    style = (sft_info or {}).get("prompt_style") or {}
    return config.max_new_tokens or int(style.get("max_new_tokens") or 0) or DEFAULT_REPLY_TOKENS


def train_rows(config: GRPOStageConfig, split: str = "train") -> list[dict[str, Any]]:
    """The packet rows of a split: failures found, optionally only ``config.envs`` (GRPO samples the train
    ones that :func:`stream_rows` keeps)."""
    from reharness.training.data import packet_rows, read_records

    rows = packet_rows(read_records(config.data), split)
    rows = [r for r in rows if config.envs is None or r["env"] in config.envs]
    if split != "train":
        return rows
    if not rows:
        raise DataError(
            f"no train packets in {config.data!r}" + (f" for envs {config.envs}" if config.envs else ""),
            hint="collect them first with `reharness train engineer --stage sft` (or --stage data)",
        )
    return rows


def stream_rows(rows: list[dict[str, Any]], packets: Literal["all", "contested"]) -> list[dict[str, Any]]:
    """The packets of the GRPO stream: ``all`` of them, or the ``contested`` ones — the packets whose
    teacher candidates, measured at collection on this same train batch, scored differently (all of them
    when none did). Chosen on train data only: a group can only carry reward variance where some repairs
    change the outcome and others do not."""
    from reharness.training.data import contested

    if packets == "all":
        return rows
    kept = [r for r in rows if contested(r)]
    return kept or rows


def grpo_kwargs(config: Any, **specific: Any) -> dict[str, Any]:
    """The keyword arguments of a ``trl.GRPOConfig`` from the fields every reharness GRPO config shares (the
    surrogate — clip range, KL, loss type, reward scaling —, sampling, learning rate, seed, checkpoints and
    logging; on-policy: one iteration per generation) plus ``specific`` (batch shape, device, …). The
    engineer's and the policy's GRPO both build their trainer arguments here; ``--dry-run`` prints them."""
    common: dict[str, Any] = dict(
        output_dir=str(Path(config.out) / "checkpoints"),
        max_steps=config.steps,
        num_generations=config.k,
        num_iterations=1,
        temperature=config.temperature,
        top_p=config.top_p,
        epsilon=config.epsilon,
        epsilon_high=config.epsilon_high,
        beta=config.beta,
        loss_type=config.loss_type,
        scale_rewards=config.scale_rewards,
        learning_rate=config.learning_rate,
        lr_scheduler_type="constant",
        max_grad_norm=getattr(config, "max_grad_norm", 1.0),
        remove_unused_columns=False,
        activation_checkpointing=False,
        fp16=False,
        seed=config.seed,
        data_seed=config.seed,
        logging_steps=1,
        save_strategy="steps",
        save_steps=config.save_steps,
        report_to=list(config.report_to),
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    return common | specific


def grpo_args(config: Any, **specific: Any) -> Any:
    """The ``trl.GRPOConfig`` of :func:`grpo_kwargs`."""
    from trl import GRPOConfig

    return GRPOConfig(**grpo_kwargs(config, **specific))


def trl_kwargs(config: GRPOStageConfig, max_new_tokens: int) -> dict[str, Any]:
    """The ``trl.GRPOConfig`` arguments of a stage config (on-policy, one packet group per micro-batch)."""
    return grpo_kwargs(
        config,
        per_device_train_batch_size=config.k,
        gradient_accumulation_steps=config.packets_per_step,
        max_completion_length=max_new_tokens,
        use_cpu=config.device == "cpu",
        bf16=config.bf16,
        use_vllm=config.use_vllm,
        vllm_mode=config.vllm_mode,
        vllm_server_base_url=config.vllm_server_base_url,
    )


def trl_config(config: GRPOStageConfig, max_new_tokens: int) -> Any:
    """The ``trl.GRPOConfig`` of a stage config (:func:`trl_kwargs`)."""
    from trl import GRPOConfig

    return GRPOConfig(**trl_kwargs(config, max_new_tokens))


def _constrained_rollouts(
    config: GRPOStageConfig, style: PromptStyle, rows: list[dict[str, Any]], max_new: int
) -> Any:
    """The grammar-masked ``rollout_func`` of ``config.constrain`` (program engineers only)."""
    import os

    from reharness.training.constrained_rollout import constrained_rollout_func, prompt_key
    from reharness.training.engineer_model import row_prompt

    if style.language != "program" or config.use_vllm:
        raise ConfigError(
            "constrained GRPO rollouts need a repair-program engineer decoded by Hugging Face "
            f"(this SFT engineer writes {style.language!r}"
            + (", and use_vllm is on)" if config.use_vllm else ")"),
            hint="drop the constraint option, or train the SFT engineer with --language program",
        )
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL 1.16
    return constrained_rollout_func(
        {prompt_key(row_prompt(r, style)): r["env"] for r in rows},
        temperature=config.temperature,
        top_p=config.top_p,
        max_new_tokens=max_new,
        seed=config.seed,
    )


def run_grpo(config: GRPOStageConfig, *, agents: Any = None, progress: Any = None) -> dict[str, Any]:
    """Train the SFT engineer with GRPO into ``config.out``; returns the summary written to engineer.json.

    ``agents`` (env → target agent) overrides the agents recorded with the packets (tests, shared models).
    """
    import datasets
    import torch
    from transformers.trainer_utils import get_last_checkpoint
    from trl import GRPOTrainer

    from reharness.training.engineer_model import (
        count_params,
        load_engineer,
        row_prompt,
        save_engineer,
        update_engineer_info,
    )
    from reharness.training.progress import progress_callbacks, quiet, step_timer
    from reharness.training.rerun import PairedRerunReward

    datasets.disable_progress_bars()
    sft_info = check_sft_dir(config.sft)
    packets = train_rows(config)
    rows = stream_rows(packets, config.packets)
    old = PromptStyle.model_validate(sft_info.get("prompt_style") or {})
    max_new = reply_budget(config, sft_info)
    style = old.model_copy(update={"max_new_tokens": max_new})
    tokenizer, model, _ = load_engineer(config.sft, dtype="bfloat16" if config.bf16 else None)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    dataset = datasets.Dataset.from_list(
        [{"prompt": row_prompt(r, style), "packet_id": r["packet_id"]} for r in rows]
    )
    rollout_func = _constrained_rollouts(config, style, rows, max_new) if config.constrain else None
    reward = PairedRerunReward(
        rows,
        config.runs_dir or Path(config.data) / "runs",
        agents=agents,
        timeout_s=config.rerun_timeout_s,
        log_path=out / "rewards.jsonl",
        reward_control=config.reward_control,
        seed=config.seed,
    )
    timer = step_timer()
    started = time.perf_counter()
    try:
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[cast(Any, reward)],
            args=trl_config(config, max_new),
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[timer, *progress_callbacks(progress, config.steps, "grpo")],
            rollout_func=rollout_func,
        )
        if progress is not None:
            quiet(trainer)
        checkpoints = out / "checkpoints"
        last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
        resume_training(trainer, last)
    finally:
        reward.close()
    history = trainer.state.log_history
    seconds = sum(timer.seconds)
    summary = {
        "stage": "grpo",
        "config": config.model_dump(mode="json"),
        "sft": {"path": str(config.sft), "examples": sft_info.get("examples")},
        "envs": sorted({r["env"] for r in rows}),
        "packets": len(rows),
        "packet_stream": {"kind": config.packets, "train_packets": len(packets)},
        "params": count_params(trainer.model),
        "resumed_from": last,
        "reward_curve": [round(float(h["reward"]), 6) for h in history if "reward" in h],
        "reward_std_curve": [round(float(h.get("reward_std", 0.0)), 6) for h in history if "reward" in h],
        "valid_frac_curve": [
            round(float(h["rerun/valid_frac"]), 4) for h in history if "rerun/valid_frac" in h
        ],
        "variance_frac_curve": [
            round(float(h["rerun/variance_frac"]), 4) for h in history if "rerun/variance_frac" in h
        ],
        "timing": {
            "steps_timed": len(timer.seconds),
            "seconds_per_step": round(seconds / max(1, len(timer.seconds)), 3),
            "rerun_seconds": round(reward.seconds, 3),
            "rerun_share": round(reward.seconds / seconds, 4) if seconds else None,
            "total_seconds": round(time.perf_counter() - started, 1),
        },
        "torch_threads": torch.get_num_threads(),
    }
    save_engineer(trainer.model, tokenizer, out, style, summary)
    valid = train_rows(config, "valid") if config.select_on_valid or config.select == "valid" else []
    if valid:
        summary |= _valid_summary(config, out, style, summary, valid, agents, tokenizer)
        update_engineer_info(out, {k: summary[k] for k in ("valid", "selection") if k in summary})
    return summary


def _valid_summary(
    config: GRPOStageConfig,
    out: Path,
    style: PromptStyle,
    summary: dict[str, Any],
    valid: list[dict[str, Any]],
    agents: Any,
    tokenizer: Any,
) -> dict[str, Any]:
    """``valid``: the SFT start's and the kept engineer's greedy scores on the valid packets, with the share
    of packets whose greedy reply changed and the token edit distance; ``selection`` with ``select=valid``."""
    from reharness.training.grpo_select import program_change, select_on_valid
    from reharness.training.select import valid_score

    runs = config.runs_dir or Path(config.data) / "runs"
    if config.select == "valid":
        selection = select_on_valid(
            out, config.sft, style, summary, valid, runs, agents, config.seed, config.steps
        )
        curve = {c["step"]: c for c in selection["valid_curve"]}
        return {
            "valid": {"sft": curve[0], "grpo": curve[selection["selected_step"]]},
            "selection": selection,
        }
    sft = valid_score(config.sft, valid, runs, agents, config.seed)
    grpo = valid_score(out, valid, runs, agents, config.seed)

    def tokenize(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    grpo |= program_change(sft["replies"], grpo["replies"], tokenize)
    return {"valid": {"sft": sft, "grpo": grpo}}
