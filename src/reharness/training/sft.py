"""Cold-start SFT of the engineer: TRL ``SFTTrainer`` on (packet prompt → teacher reply) pairs.

The SFT set is the kept teacher replies of the ``train`` split (:mod:`.data`); the ``valid`` split's examples,
when there are any, give the eval loss written to the model directory (model selection). Examples are
conversational prompt/completion pairs, so TRL puts the loss on the reply tokens only
(``completion_only_loss``) and the prompt is rendered by the model's own chat template — the same
rendering the ``hf:`` backend uses at inference. Examples longer than the model's context are left out
(counted), never truncated mid-reply.

Without ``base`` the engineer is the built-in tiny one, trained from scratch (tokenizer included) with the
compact prompt, replying in repair programs (:mod:`reharness.engineer.program`): its targets are the
teacher's programs measured on each packet, up to ``per_packet`` of them (a reply is only ever a target
for the packet it was measured on); with ``base`` any local Hugging Face causal LM with a chat template is
fine-tuned (full prompt and hook code by default, learning rate 1e-5 as in Harness-R1).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import DataError, options_error
from reharness.engineer.compact import PromptStyle, build_prompt, compact_reply
from reharness.training.engineer_model import SHAPES, row_prompt


class SFTStageConfig(BaseModel):
    """Options of ``reharness train engineer --stage sft`` (validated, frozen, written to the out dir)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: str = Field(description="Directory of collected records (batches.jsonl).")
    out: str
    envs: list[str] | None = Field(None, description="Only rows of these environments (default: all).")
    base: str | None = Field(None, description="A local HF model dir to fine-tune (default: tiny engineer).")
    size: Literal["S", "micro"] = "S"
    prompt: Literal["full", "compact"] | None = Field(None, description="Default: compact tiny, full base.")
    max_prompt_chars: int = Field(1500, gt=200)
    max_new_tokens: int = Field(1536, gt=0)
    compact_reply: bool | None = Field(
        None,
        description="Train on replies whose thinking is cut to the patch description (default: compact).",
    )
    language: Literal["hooks", "program"] | None = Field(
        None,
        description="Reply language: 'program' (repair programs; default for the tiny engineer) or 'hooks' "
        "(hook code; default with --base).",
    )
    per_packet: int | None = Field(
        None,
        ge=1,
        le=16,
        description="Program targets per packet: the best N distinct teacher programs measured on it with "
        "Δ_B ≥ 0 (default 2; hook code always keeps 1, Harness-R1's rule).",
    )
    packet_views: int = Field(
        1,
        ge=1,
        le=8,
        description="Programs: prompts per target, each the same packet with its traces in another "
        "(rotated) order, so the compact prompt shows other failures of the batch; the target stays the "
        "reply measured on that packet (1: the packet as recorded).",
    )
    steps: int = Field(300, gt=0)
    batch_size: int = Field(4, gt=0, description="Examples per optimizer step (gradient accumulation).")
    learning_rate: float | None = Field(
        None, gt=0, description="Default: 2e-3 tiny S, 5e-3 micro (tests), 1e-5 base."
    )
    seed: int = 0
    report_to: list[str] = Field(default_factory=list, description="e.g. ['tensorboard'].")
    device: Literal["cpu", "cuda"] = Field("cpu", description="cuda: GPUs through accelerate (bf16 advised).")
    bf16: bool = Field(False, description="bfloat16 training (GPUs only).")

    @classmethod
    def build(cls, **values: Any) -> SFTStageConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness train engineer") from None

    @property
    def style(self) -> PromptStyle:
        kind = self.prompt or ("full" if self.base else "compact")
        language = self.language or ("program" if kind == "compact" and not self.base else "hooks")
        return PromptStyle(
            kind=kind, max_chars=self.max_prompt_chars, max_new_tokens=self.max_new_tokens, language=language
        )

    @property
    def targets_per_packet(self) -> int:
        return (self.per_packet or 2) if self.style.language == "program" else 1

    @property
    def short_replies(self) -> bool:
        return self.compact_reply if self.compact_reply is not None else self.style.kind == "compact"

    @property
    def lr(self) -> float:
        if self.learning_rate:
            return self.learning_rate
        return 1e-5 if self.base else (5e-3 if self.size == "micro" else 2e-3)


def sft_kwargs(config: SFTStageConfig, max_length: int, disable_tqdm: bool = True) -> dict[str, Any]:
    """The keyword arguments of the stage's ``trl.SFTConfig`` (``--dry-run`` prints them);
    ``max_length`` is the model's context (``max_position_embeddings``)."""
    return dict(
        output_dir=str(Path(config.out) / "checkpoints"),
        max_steps=config.steps,
        per_device_train_batch_size=1,
        gradient_accumulation_steps=config.batch_size,
        learning_rate=config.lr,
        lr_scheduler_type="cosine",
        warmup_steps=max(0, config.steps // 20),
        max_grad_norm=1.0,
        activation_checkpointing=False,
        max_length=max_length,
        use_cpu=config.device == "cpu",
        bf16=config.bf16,
        fp16=False,
        seed=config.seed,
        data_seed=config.seed,
        logging_steps=max(1, config.steps // 20),
        save_strategy="no",
        report_to=list(config.report_to),
        disable_tqdm=disable_tqdm,
        dataloader_num_workers=0,
    )


def examples(
    rows: list[dict[str, Any]],
    style: PromptStyle,
    short: bool = False,
    per_packet: int = 1,
    views: int = 1,
) -> list[dict[str, Any]]:
    """Conversational prompt/completion examples of SFT rows.

    Hook code: the kept teacher reply (``short``: :func:`compact_reply`). Programs (``style.language``):
    up to ``per_packet`` measured program targets per packet (:func:`~.data.program_targets`), each paired
    with up to ``views`` prompts of the packet it was measured on (:func:`packet_views`); a packet without
    a target gives no example."""
    if style.language == "program":
        from reharness.engineer.program import program_reply
        from reharness.training.data import program_targets

        out = []
        for row in rows:
            targets = program_targets(row, per_packet)
            prompts = packet_views(row, style, views) if targets else []
            for target in targets:
                completion = [{"role": "assistant", "content": program_reply(target["program"])}]
                out += [{"prompt": prompt, "completion": completion} for prompt in prompts]
        return out
    return [
        {
            "prompt": row_prompt(row, style),
            "completion": [
                {"role": "assistant", "content": compact_reply(row["reply"]) if short else row["reply"]}
            ],
        }
        for row in rows
    ]


def packet_views(row: dict[str, Any], style: PromptStyle, views: int) -> list[list[dict[str, str]]]:
    """Up to ``views`` distinct compact prompts of one packet: its traces rotated by ``i * n // views``
    (renumbered 1..n), so a prompt budget that fits only the first traces shows other failures of the same
    batch. Every view keeps the packet's header, tasks and measured outcome, so a reply measured on the
    packet stays an honest target for each view (packet-level augmentation without relabelling)."""
    from reharness.failures.packets import FailurePacket

    first = row_prompt(row, style)
    packet = FailurePacket.model_validate_json(row["packet"])
    traces, prompts = packet.traces, [first]
    for i in range(1, min(views, len(traces))):
        shift = i * len(traces) // views
        order = traces[shift:] + traces[:shift]
        view = packet.model_copy(
            update={"traces": [t.model_copy(update={"position": j + 1}) for j, t in enumerate(order)]}
        )
        prompt = [{"role": m.role, "content": m.content} for m in build_prompt(view, style)]
        if prompt not in prompts:
            prompts.append(prompt)
    return prompts


def _fits(example: dict[str, Any], tokenizer: Any, limit: int) -> bool:
    text = tokenizer.apply_chat_template(example["prompt"] + example["completion"], tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"]) <= limit


def select_rows(config: SFTStageConfig, split: str) -> list[dict[str, Any]]:
    from reharness.training.data import read_records, sft_rows

    records = read_records(config.data)
    if not records:
        raise DataError(
            f"no collected batches in {config.data!r}",
            hint="collect packets first: `reharness train engineer --stage sft` collects them into --data",
        )
    rows = sft_rows(records, split)
    return [r for r in rows if config.envs is None or r["env"] in config.envs]


def run_sft(config: SFTStageConfig, progress: Any = None) -> dict[str, Any]:
    """Train the engineer on the SFT set into ``config.out``; returns the summary written to engineer.json."""
    import datasets
    import torch
    from trl import SFTConfig, SFTTrainer

    from reharness.training.engineer_model import (
        build_tiny_engineer,
        check_model_dir,
        corpus,
        count_params,
        load_engineer,
        save_engineer,
    )
    from reharness.training.progress import progress_callbacks, quiet

    datasets.disable_progress_bars()
    started = time.perf_counter()
    style = config.style
    train_rows, valid_rows = select_rows(config, "train"), select_rows(config, "valid")
    if not train_rows:
        raise DataError(
            f"the SFT set in {config.data!r} has no train examples"
            + (f" for envs {config.envs}" if config.envs else ""),
            hint="collect more train batches (--batches) or use a stronger --teacher",
        )
    short, per_packet = config.short_replies, config.targets_per_packet
    train_all = examples(train_rows, style, short, per_packet, config.packet_views)
    valid_all = examples(valid_rows, style, short, per_packet)  # valid loss on the packets as recorded
    if not train_all:
        raise DataError(
            f"no SFT example in {config.data!r} has a repair program measured on its packet",
            hint="collect with the operators teacher, or train on hook code with --language hooks",
        )
    if config.base:
        root = check_model_dir(config.base, "--base", "pass a local Hugging Face model directory")
        tokenizer, model, _ = load_engineer(root, dtype="bfloat16" if config.bf16 else None)
    else:
        shape = SHAPES[config.size]
        from reharness.engineer.program import vocabulary

        words = vocabulary() if style.language == "program" else []
        tokenizer, model = build_tiny_engineer(corpus(train_all + valid_all), shape, config.seed, words)
    limit = int(getattr(model.config, "max_position_embeddings", 0) or 1 << 30)
    train = [e for e in train_all if _fits(e, tokenizer, limit)]
    valid = [e for e in valid_all if _fits(e, tokenizer, limit)]
    if not train:
        raise DataError(
            f"every SFT example is longer than the model's context ({limit} tokens)",
            hint="lower --max-prompt-chars or use a model with a longer context",
        )
    out = Path(config.out)
    args = SFTConfig(**sft_kwargs(config, limit, disable_tqdm=progress is not None))
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=datasets.Dataset.from_list(train),
        eval_dataset=datasets.Dataset.from_list(valid) if valid else None,
        processing_class=tokenizer,
        callbacks=progress_callbacks(progress, config.steps),
    )
    if progress is not None:
        quiet(trainer)
    trainer.train()
    eval_loss = trainer.evaluate()["eval_loss"] if valid else None
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    summary = {
        "stage": "sft",
        "config": config.model_dump(mode="json"),
        "envs": sorted({r["env"] for r in train_rows}),
        "examples": {
            "train": len(train),
            "valid": len(valid),
            "too_long": len(train_all) - len(train),
            "packets": len(train_rows),
            "per_packet": per_packet,
            "packet_views": config.packet_views,
        },
        "params": count_params(trainer.model),
        "final_loss": losses[-1] if losses else None,
        "loss_curve": [round(v, 4) for v in losses],
        "eval_loss": eval_loss,
        "train_seconds": round(time.perf_counter() - started, 1),
        "torch_threads": torch.get_num_threads(),
    }
    save_engineer(trainer.model, tokenizer, out, style, summary)
    return summary
