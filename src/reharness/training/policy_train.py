"""``reharness train policy``: GRPO of an agent policy in H0 with sibling rescue, start to model directory.

Layout of ``--out DIR``: ``train_config.json`` (the resolved options; a rerun with other options is refused),
``checkpoints/`` (TRL checkpoints, the last two kept; a rerun resumes from the last one), ``metrics.jsonl``
(one line per optimizer step: reward, all-fail share, rescues per sibling, rows and tokens, costs per role,
wall time split), ``decisions.jsonl`` (the router's decisions with their outcomes), ``profiles/`` (each
re-anchored profile) and ``model/`` — the trained policy as a Hugging Face model directory, usable as
``--agent hf:DIR/model``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError
from reharness.core.resume import refuse_other_options
from reharness.training.policy_config import PolicyTrainConfig, check_trainable
from reharness.training.policy_grpo import STATE_FILE, TrainingSession, _trainer_class
from reharness.training.resume import resume_training

CONFIG_FILE = "train_config.json"
#: The profile re-anchored on the trained policy (``OUT/profiles/final.json``), when the run re-anchors.
FINAL_PROFILE = "final.json"
MODEL_DIR = "model"


def policy_model_dir(agent: str) -> Path:
    """The model directory a policy spec names — ``tiny:NAME``, ``hf:DIR``, ``hf:FILE.gguf`` or
    ``pretrained:NAME`` (a GGUF model, converted once into the cache; the engine after ``@`` does not apply:
    training runs in float32); other agents cannot train."""
    from reharness.models.registry import check_spec, resolve_tiny

    check_trainable(agent)
    parsed = check_spec(agent)
    if parsed.kind == "tiny":
        return resolve_tiny(parsed.target, train=True)
    if parsed.kind == "pretrained":
        from reharness.models.pretrained import converted_dir, gguf_path, parse_pretrained

        return converted_dir(gguf_path(parse_pretrained(parsed.target)[0]))
    if parsed.target.endswith(".gguf"):
        from reharness.models.pretrained import converted_dir

        return converted_dir(Path(parsed.target).expanduser())
    return Path(parsed.target).expanduser()


def lora_config(config: PolicyTrainConfig, executor: Any = None) -> Any:
    """The ``peft.LoraConfig`` of ``--lora-rank`` (None for full fine-tuning), checked before any work: peft
    must be installed, and Ray rollouts sync whole state dicts, which a LoRA model's are not."""
    if not config.lora_rank:
        return None
    from reharness.training.policy_grpo import _rollouts_on

    if _rollouts_on(executor):
        raise ConfigError(
            "--lora-rank trains adapters, and Ray rollout actors sync the policy's whole weights",
            hint="drop --executor ray, or train all weights (--lora-rank 0)",
        )
    try:
        from peft import LoraConfig
    except ImportError:
        raise ConfigError(
            "--lora-rank needs the package peft",
            hint="pip install peft   (or: pip install 'reharness[lora]')",
        ) from None
    return LoraConfig(
        r=config.lora_rank,
        lora_alpha=2 * config.lora_rank,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )


def _write_config(out: Path, config: PolicyTrainConfig) -> None:
    file = out / CONFIG_FILE
    refuse_other_options(
        file,
        config,
        run="a training run",
        free={"steps", "save_steps"},  # neither changes a step already taken
        hint="use another --out, or rerun with the first run's options to resume it",
    )
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    file.write_text(text, encoding="utf-8")


def trl_kwargs(config: PolicyTrainConfig) -> dict[str, Any]:
    """The ``trl.GRPOConfig`` arguments of a policy run: CPU float32, on-policy (one pass per generation
    batch), the step's rows split into ``micro_batches`` accumulation chunks."""
    from reharness.training.grpo import grpo_kwargs

    rows = config.tasks_per_step * config.k
    return grpo_kwargs(
        config,
        per_device_train_batch_size=rows // config.micro_batches,
        gradient_accumulation_steps=config.micro_batches,
        steps_per_generation=config.micro_batches,
        max_completion_length=256,
        use_cpu=True,
        bf16=False,
        save_total_limit=2,  # a resume reads only the last; a pretrained policy's checkpoint is ~1.6 GB
    )


def trl_args(config: PolicyTrainConfig) -> Any:
    """The ``trl.GRPOConfig`` of a policy run (:func:`trl_kwargs`)."""
    from trl import GRPOConfig

    return GRPOConfig(**trl_kwargs(config))


def train_policy(config: PolicyTrainConfig, progress: Any = None, executor: Any = None) -> dict[str, Any]:
    """Train ``config.agent`` with GRPO and rescue; returns ``{path, steps, rollouts, rescues: {tried,
    succeeded}, train_seconds}`` plus details (also written to ``OUT/summary.json``).

    ``executor``: where the rollouts run (default: the one set by ``use_executor``, else this process); a
    Ray executor puts them on policy actors whose weights are synced every step
    (:mod:`reharness.training.ray_rollouts`). Not part of the run's options: either resumes the other."""
    import datasets
    from transformers import TrainerCallback
    from transformers.trainer_utils import get_last_checkpoint

    from reharness.envs.registry import make_env, resolve_env_name
    from reharness.models.hf_backend import agent_defaults, load_model_dir, write_agent_defaults
    from reharness.training.progress import progress_callbacks, quiet
    from reharness.training.unseen_tasks import unseen_task_indices

    datasets.disable_progress_bars()
    out = Path(config.out)
    start_dir = policy_model_dir(config.agent)
    _write_config(out, config)
    tokenizer, model = load_model_dir(start_dir)
    model.train()
    env = make_env(config.env, split=config.split)
    total = env.num_tasks()
    env.close()
    indices = (
        unseen_task_indices(start_dir, resolve_env_name(config.env).name, config.split, total)
        if config.unseen_tasks
        else range(total)
    )
    dataset = datasets.Dataset.from_list(
        [{"prompt": [{"role": "user", "content": f"task {i}"}], "task_index": i} for i in indices]
    )
    from reharness.runtime.dispatch import current_executor

    executor = executor or current_executor()
    peft_config = lora_config(config, executor)
    if peft_config is not None:
        import torch

        torch.manual_seed(config.seed)  # the adapters are initialised before the trainer seeds anything
    session = TrainingSession(config, tokenizer, model, out, executor, start_dir)

    class _SaveState(TrainerCallback):  # type: ignore[misc]
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            target = Path(args.output_dir) / f"checkpoint-{state.global_step}" / STATE_FILE
            if target.parent.is_dir():
                target.write_text(json.dumps(session.state(), default=str), encoding="utf-8")

    started = time.perf_counter()
    final_profile: dict[str, Any] | None = None
    try:
        trainer = _trainer_class()(
            model=model,
            reward_funcs=[_reward_from_rollouts],
            args=trl_args(config),
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[_SaveState(), *progress_callbacks(progress, config.steps, "policy")],
            peft_config=peft_config,
        )
        trainer.setup_episodes(session)
        if progress is not None:
            quiet(trainer)
        checkpoints = out / "checkpoints"
        last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
        # resumed from the last checkpoint, or from the start: either way nothing after it stays in the logs
        session.restore(Path(last) if last else None)
        resume_training(trainer, last)
        if session.router is not None and (config.reanchor_every or config.reanchor_at_start):
            # Rank-1 after training reads the profile of the trained policy, not of the start policy
            done = int(trainer.state.global_step)
            session.loop.run_until_complete(session.reanchor(done, FINAL_PROFILE))
            final_profile, session.pending_reanchor = session.pending_reanchor, None
    finally:
        session.close()
    model_dir = out / MODEL_DIR
    # LoRA: the adapters are merged into the weights, so the model directory is a plain one (hf:DIR)
    trained = trainer.model.merge_and_unload() if peft_config is not None else trainer.model
    trained.save_pretrained(str(model_dir))
    tokenizer.save_pretrained(str(model_dir))
    if defaults := agent_defaults(start_dir):  # the trained policy decodes as the start policy did
        write_agent_defaults(model_dir, defaults)
    summary = {
        "path": str(model_dir),
        "steps": int(trainer.state.global_step),
        "rollouts": session.totals["rollouts"],
        "rescues": {
            "tried": session.totals["rescues_tried"],
            "succeeded": session.totals["rescues_succeeded"],
        },
        "train_seconds": round(time.perf_counter() - started, 1),
        "resumed_from": last,
        "start": str(start_dir),
        "config": config.model_dump(mode="json"),
        "rows": vars(session.row_stats),
        "rollouts_on": "ray" if session.remote else "local",
        "weight_syncs": getattr(session.engine, "syncs", 0),
        "costs": session.costs,
        "tokens": int(sum(session.costs.get("tokens", {}).values())),
        "model_calls": int(sum(session.costs.get("model_calls", {}).values())),
        "final_profile": final_profile,
        "profile_warning": session.profile_warning,
    }
    (model_dir / "provenance.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    return summary


def _reward_from_rollouts(completions: list[Any], **kwargs: Any) -> list[float]:
    """TRL requires a reward function; ours are episode outcomes, computed with the rollouts in
    :meth:`EpisodeGRPOTrainer._generate_and_score_completions` (which never calls this one)."""
    raise RuntimeError("policy rewards come from the episodes; this function is not called")
