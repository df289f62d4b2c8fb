"""Train a tiny agent from scratch: demonstrations → tokenizer → Llama-style model → TRL SFT → HF directory.

The whole path uses the same stack as a large model on a GPU: demonstrations are rendered through the base
harness (:mod:`.demos`), tokenised with the agent's own BPE and chat template (:mod:`.tokenizer`), and trained
with TRL's ``SFTTrainer`` on pre-tokenised whole episodes. Supervision comes from an ``assistant_masks``
column (TRL builds ``labels`` from it: -100 wherever the mask is 0), so only supervised assistant turns carry
loss — the perturbed turns of the recovery data do not. The learning rate follows warmup → stable → cooldown
(``warmup_stable_decay``). The output directory loads with ``AutoModelForCausalLM`` / ``AutoTokenizer`` and
holds ``provenance.json`` (command, seed, versions, data statistics, time, parameters).
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reharness import __version__
from reharness.core.errors import ConfigError
from reharness.models.tiny.config import Recipe
from reharness.training.resume import resume_training
from reharness.training.tiny.demos import render_demos
from reharness.training.tiny.interventions import InterventionRates
from reharness.training.tiny.warmup import ProgressFn, copy_warmup, vocabulary_ids
from reharness.training.tiny.workdir import TrainingWorkDir

PROVENANCE = "provenance.json"
#: Resumable checkpoints per training (``recipe.steps // CHECKPOINTS`` steps apart): a tiny agent's is a few
#: MB, and an interruption loses at most this share of the steps.
CHECKPOINTS = 20


@dataclass(frozen=True)
class TrainResult:
    path: Path
    params: int
    train_seconds: float
    provenance: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "params": self.params, "train_seconds": round(self.train_seconds, 1)}


def _code_version() -> str:
    """Package version plus the git commit of the source tree when there is one (never fails)."""
    import subprocess

    try:
        root = Path(__file__).resolve().parents[4]
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", ""
    return f"{__version__}+{commit}{'.dirty' if dirty else ''}" if commit else __version__


def build_dataset(
    recipe: Recipe, seed: int, progress: ProgressFn | None = None, tokenizer: Any = None
) -> tuple[Any, Any, dict[str, Any]]:
    """Render demos, train the tokenizer (unless one is given) and encode: (tokenizer, datasets.Dataset,
    data statistics)."""
    import datasets
    from datasets import Dataset

    from reharness.training.tiny.tokenizer import demo_texts, encode_demo, train_tokenizer

    if progress:
        datasets.disable_progress_bars()
        progress("demos", 0, recipe.num_demos, {})
    rates = InterventionRates(observed=recipe.observed_notes) if recipe.interventions else None
    demos, stats = render_demos(
        recipe.env,
        recipe.num_demos,
        seed=seed,
        perturb_prob=recipe.perturb_prob,
        repeat_prob=recipe.repeat_prob,
        thoughts=recipe.thoughts,
        interventions=rates,
        near_miss=recipe.near_miss,
    )
    if tokenizer is None:
        tokenizer = train_tokenizer(demo_texts(demos), recipe.model.vocab_size, recipe.split_spaces)
    columns: dict[str, list[list[int]]] = {"input_ids": [], "assistant_masks": []}
    lengths, supervised = [], 0
    cut_demos, cut_supervised = 0, 0  # demos longer than max_length lose their endings: count them
    for demo in demos:
        ids, mask = encode_demo(tokenizer, demo, context_loss=recipe.context_loss)
        if len(ids) > recipe.max_length:
            cut_demos += 1
            cut_supervised += sum(mask[recipe.max_length :])
        ids, mask = ids[: recipe.max_length], mask[: recipe.max_length]
        if not any(mask):
            continue
        columns["input_ids"].append(ids)
        columns["assistant_masks"].append(mask)
        lengths.append(len(ids))
        supervised += sum(mask)
    stats.extra.update(
        {
            "tokens": sum(lengths),
            "supervised_tokens": supervised,
            "max_tokens": max(lengths),
            "mean_tokens": round(sum(lengths) / len(lengths), 1),
            "vocab_size": len(tokenizer),
            "perturb_prob": recipe.perturb_prob,
            "repeat_prob": recipe.repeat_prob,
            "near_miss": recipe.near_miss,
            "interventions": asdict(rates) if rates else None,
            "harness_notes": sum(m.content.count("[Harness]") for d in demos for m in d.messages),
            "split": "train",
            "max_length": recipe.max_length,
            "truncated_demos": cut_demos,
            "truncated_supervised_tokens": cut_supervised,
        }
    )
    if progress and cut_demos:
        progress(
            "truncated", cut_demos, len(demos), {"supervised_cut": cut_supervised, "supervised": supervised}
        )
    return tokenizer, Dataset.from_dict(columns), stats.as_dict()


def build_model(recipe: Recipe, vocab_size: int, tokenizer: Any, seed: int) -> Any:
    """A freshly initialised Llama-style causal LM (no pretrained weights)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        **recipe.model.llama_config_kwargs(vocab_size),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return LlamaForCausalLM(config)


def _progress_callback(progress: ProgressFn, total: int) -> Any:
    from transformers import TrainerCallback

    class _Progress(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            metrics = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            progress("train", int(state.global_step), total, metrics)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            progress("train", int(state.global_step), total, {})

    return _Progress()


def make_trainer(
    recipe: Recipe,
    dataset: Any,
    tokenizer: Any,
    seed: int,
    output_dir: str | Path,
    progress: ProgressFn | None = None,
    model: Any = None,
    save_every: int | None = None,
) -> Any:
    """TRL ``SFTTrainer`` on pre-tokenised episodes (``input_ids``, ``assistant_masks``).

    ``model`` defaults to a fresh model from :func:`build_model`. ``save_every``: write a resumable
    checkpoint into ``output_dir`` every so many steps (the last two are kept); None saves nothing.
    """
    from trl import SFTConfig, SFTTrainer

    if model is None:
        model = build_model(recipe, len(tokenizer), tokenizer, seed)
    args = SFTConfig(
        output_dir=str(output_dir),
        max_steps=recipe.steps,
        # one episode per forward pass: no padding, and per-token speed on CPU is best at batch 1
        per_device_train_batch_size=1,
        gradient_accumulation_steps=recipe.batch_size,
        learning_rate=recipe.learning_rate,
        lr_scheduler_type="warmup_stable_decay",
        lr_scheduler_kwargs={"num_decay_steps": max(1, int(recipe.decay_ratio * recipe.steps))},
        warmup_steps=int(recipe.warmup_ratio * recipe.steps),
        weight_decay=recipe.weight_decay,
        max_grad_norm=1.0,
        activation_checkpointing=False,  # TRL turns it on by default; tiny models need no memory savings
        max_length=recipe.max_length,
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=seed,
        data_seed=seed,
        logging_steps=max(1, recipe.steps // 20),
        save_strategy="steps" if save_every else "no",
        save_steps=save_every or 500,
        save_total_limit=2,
        report_to=[],
        disable_tqdm=progress is not None,
        dataloader_num_workers=0,
        dataset_num_proc=None,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[_progress_callback(progress, recipe.steps)] if progress else None,
    )
    if progress is not None:
        from transformers import PrinterCallback, ProgressCallback

        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(ProgressCallback)
    return trainer


def train_agent(
    recipe: Recipe,
    out: str | Path,
    seed: int = 0,
    threads: int | None = None,
    progress: ProgressFn | None = None,
    command: str | None = None,
    dtype: str = "float16",
    init: str | Path | None = None,
) -> TrainResult:
    """Train ``recipe`` with ``seed`` into the HF model directory ``out`` (replaced if it exists).

    Interrupted, a rerun with the same recipe, seed and ``init`` resumes from ``out``'s working directory
    (:mod:`.workdir`): the demos, tokenizer and warm-up are not redone and the SFT goes on from its last
    checkpoint; the provenance records ``resumed_at_step``.

    ``init``: a tiny agent's model directory to continue from — its tokenizer and weights are kept and the
    copy warm-up is skipped; its shape must be the recipe's (checked before any work)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    if init:
        _check_init_shape(Path(init), recipe)
    if threads:
        torch.set_num_threads(threads)
    started = time.perf_counter()
    out = Path(out)
    init_record = None if init is None else _init_record(Path(init))
    work = TrainingWorkDir(out, _fingerprint(recipe, seed, init_record)).open()
    if work.discarded and progress:
        progress("discarded", 0, 0, {})
    stored = work.load_data()
    if stored is None:
        base_tokenizer = AutoTokenizer.from_pretrained(str(init)) if init else None
        tokenizer, dataset, data_stats = build_dataset(recipe, seed, progress, tokenizer=base_tokenizer)
        work.save_data(tokenizer, dataset, data_stats)
    else:
        tokenizer, dataset, data_stats = stored
    warmed = work.load_warmed()
    if warmed is not None:
        model, warmup = warmed
    else:
        if init:
            model = AutoModelForCausalLM.from_pretrained(str(init), dtype=torch.float32)
        else:
            model = build_model(recipe, len(tokenizer), tokenizer, seed)
        report = None
        if recipe.copy_warmup_steps and not init:
            report = copy_warmup(
                model,
                vocabulary_ids(tokenizer),
                recipe.copy_warmup_steps,
                recipe.copy_warmup_lr,
                seed,
                progress=progress,
                target_accuracy=recipe.copy_warmup_target,
            )
        work.save_warmed(model, report)
        warmup = None if report is None else asdict(report)
    params = sum(p.numel() for p in model.parameters())
    resume = work.last_checkpoint()
    if resume is not None and progress:
        progress("resume", _checkpoint_step(resume) or 0, recipe.steps, {})
    save_every = max(1, recipe.steps // CHECKPOINTS)
    trainer = make_trainer(recipe, dataset, tokenizer, seed, work.checkpoints, progress, model, save_every)
    resume_training(trainer, resume)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    model = trainer.model.eval()
    train_seconds = time.perf_counter() - started
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model.generation_config = GenerationConfig(
        do_sample=False,
        max_new_tokens=recipe.max_new_tokens,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model.to(getattr(torch, dtype)).save_pretrained(out)
    tokenizer.save_pretrained(out)
    provenance = {
        "name": f"{recipe.env}-{recipe.size}",
        "command": command or f"reharness agent train --env {recipe.env} --size {recipe.size} --seed {seed}",
        "argv": sys.argv,
        "seed": seed,
        "init": init_record,
        "recipe": recipe.model_dump(mode="json"),
        "code_version": _code_version(),
        "versions": _versions(),
        "data": data_stats,
        "params": params,
        "dtype": dtype,
        "train_seconds": round(train_seconds, 1),
        "torch_threads": torch.get_num_threads(),
        "final_loss": losses[-1] if losses else None,
        "loss_curve": [round(v, 4) for v in losses],
        "copy_warmup": warmup,
        "resumed_at_step": _checkpoint_step(resume),
        "machine": platform.machine(),
    }
    (out / PROVENANCE).write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    work.remove()
    return TrainResult(path=out, params=params, train_seconds=train_seconds, provenance=provenance)


def _fingerprint(recipe: Recipe, seed: int, init: dict[str, Any] | None) -> dict[str, Any]:
    """What makes two trainings the same run (a resumed one must be the one that was interrupted)."""
    return {
        "recipe": recipe.model_dump(mode="json"),
        "seed": seed,
        "init": None if init is None else init["weights_sha256"],
    }


def _checkpoint_step(checkpoint: Path | None) -> int | None:
    return None if checkpoint is None else int(checkpoint.name.rsplit("-", 1)[1])


def _check_init_shape(path: Path, recipe: Recipe) -> None:
    """Refuse an ``init`` model whose shape differs from the recipe's (the provenance records the recipe)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(path))
    have = (
        config.hidden_size,
        config.num_hidden_layers,
        config.num_attention_heads,
        config.intermediate_size,
    )
    shape = recipe.model
    want = (shape.hidden_size, shape.num_layers, shape.num_heads, shape.intermediate_size)
    if have != want:
        raise ConfigError(
            f"--init {path}: its shape (hidden, layers, heads, MLP) {have} is not the {recipe.env}-"
            f"{recipe.size} recipe's {want}",
            hint="pass the --size the init agent was trained with",
        )


def _init_record(path: Path) -> dict[str, Any]:
    """What a continued agent started from: its path, weights digest and its own provenance."""
    import hashlib

    weights = path / "model.safetensors"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest() if weights.is_file() else None
    previous = path / PROVENANCE
    return {
        "path": str(path),
        "weights_sha256": digest,
        "provenance": json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else None,
    }


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    versions = {"python": platform.python_version()}
    for dist in ("reharness", "torch", "transformers", "trl", "tokenizers"):
        try:
            versions[dist] = md.version(dist)
        except md.PackageNotFoundError:
            versions[dist] = "unknown"
    return versions
