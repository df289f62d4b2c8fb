"""Options of policy GRPO with sibling rescue (``reharness train policy``), validated and written to the run.

Defaults follow Harness-R1/Harness-S's GRPO where they are public (clip 0.2 / 0.28, no KL, group-normalised
advantages, token-mean loss) and, for what is ours, the measurements in ``docs/harness-s-training.md``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reharness.core.errors import ConfigError, options_error

#: The agent kinds whose weights train in-process (a local model directory, converted GGUF included).
TRAINABLE = ("tiny:", "hf:", "pretrained:")


def check_trainable(agent: str) -> None:
    """Refuse a starting policy whose weights cannot train here (``openai:``, scripted agents, …)."""
    if not agent.startswith(TRAINABLE):
        raise ConfigError(
            f"--agent {agent!r} cannot be trained in-process",
            hint="pass tiny:ENV-SIZE (`reharness agent list`), hf:DIR (a local chat model directory), "
            "hf:FILE.gguf or pretrained:NAME (`reharness models`)",
        )


RESCUES = ("router", "random", "placebo", "resample", "none")
Rescue = Literal["router", "random", "placebo", "resample", "none"]
#: Router strategies a training run can route by (:mod:`reharness.pool.strategies`; ``oracle`` tries every
#: sibling, which a one-sibling rescue cannot).
ROUTES = ("validation", "profile", "vote", "random")
Route = Literal["validation", "profile", "vote", "random"]


class PolicyTrainConfig(BaseModel):
    """Everything that decides a policy-training run besides the code (``train_config.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    agent: str = Field(
        description="The starting policy: tiny:NAME, hf:DIR, hf:FILE.gguf or pretrained:NAME (in-process)."
    )
    pool: str | None = Field(None, description="Frozen sibling pool directory (router/random rescue).")
    rescue: Rescue = Field(
        "router",
        description="What an all-failed H0 group gets: router (the routed sibling re-samples it), random (a "
        "random sibling), placebo (a random placebo sibling: H0 plus a neutral sentence), resample (K fresh "
        "H0 rollouts: equal compute), none (no gradient).",
    )
    route: Route = Field(
        "validation",
        description="Router strategy: validation (evolve-time rescue rate), profile (measured + learned "
        "evidence), vote (the profile's top vote_k, then the judges vote), random (a seeded shuffle).",
    )
    vote_k: int = Field(3, ge=1, description="vote: the profile's top-k the judges vote among.")
    judges: list[str] = Field(
        default_factory=lambda: ["direction", "behaviour"],
        description="vote: rule judges (direction, behaviour) and/or LLM judge model specs.",
    )
    judge_model: str | None = Field(None, description="vote: also an LLM judge on this model spec.")
    reanchor_at_start: bool = Field(
        False,
        description="Router: measure the pool's profile with the start policy at the rollout temperature "
        "before step 1 (the fix for a profile measured greedily).",
    )
    profile_samples: int = Field(
        1, gt=0, le=64, description="Re-anchoring: episodes per valid task and harness (sampled)."
    )
    k: int = Field(8, ge=2, le=64, description="Rollouts per task (the GRPO group size).")
    steps: int = Field(20, gt=0, description="Optimizer steps.")
    tasks_per_step: int = Field(4, gt=0)
    temperature: float = Field(1.0, gt=0, description="Sampling temperature of training rollouts.")
    top_p: float = Field(1.0, gt=0, le=1)
    max_new_tokens: int | None = Field(
        None,
        gt=0,
        description="Reply budget of training rollouts (default: the model's generation_config "
        "max_new_tokens, else the harness's). A sampled reply that never ends would otherwise run to the "
        "harness's 512 tokens and stay in every later prompt of the episode.",
    )
    rewritten_turns: Literal["mask", "executed", "raw"] = "mask"
    rescue_group: Literal["replace", "mixed"] = "replace"
    reanchor_every: int = Field(0, ge=0, description="Re-anchor the pool's profile every R steps (0: never).")
    reanchor_n: int = Field(40, gt=0, description="valid tasks per re-anchoring.")
    audit: bool = Field(True, description="Replay rescued successes in H0's env; unconfirmed ones get 0.")
    split: Literal["train"] = "train"
    unseen_tasks: bool = Field(
        False,
        description="Draw training tasks only from the train tasks the start policy was not shown as "
        "demonstrations (a tiny agent's provenance; training/unseen_tasks.py).",
    )
    learning_rate: float = Field(2e-4, gt=0)
    epsilon: float = Field(0.2, gt=0, lt=1)
    epsilon_high: float = Field(0.28, gt=0, lt=1)
    beta: float = Field(0.0, ge=0, description="KL coefficient (0: no reference model).")
    loss_type: Literal["dapo", "grpo", "bnpo", "dr_grpo"] = "dapo"
    scale_rewards: Literal["group", "batch", "none"] = "group"
    micro_batches: int = Field(4, gt=0, description="Chunks per optimizer step (gradient accumulation).")
    max_grad_norm: float = Field(1.0, gt=0)
    lora_rank: int = Field(
        0,
        ge=0,
        description="Train LoRA adapters of this rank (alpha 2x the rank) on every linear layer instead of "
        "all weights; 0: full fine-tuning. Needs peft; the saved model has the adapters merged.",
    )
    concurrency: int = Field(64, gt=0, description="Episodes decoded together.")
    save_steps: int = Field(5, gt=0)
    seed: int = 0
    out: str
    report_to: list[str] = Field(default_factory=list, description="e.g. ['tensorboard'].")

    @model_validator(mode="after")
    def _consistent(self) -> PolicyTrainConfig:
        if self.epsilon_high < self.epsilon:
            raise ValueError(f"epsilon_high ({self.epsilon_high}) must be >= epsilon ({self.epsilon})")
        if self.rescue in ("router", "random", "placebo") and not self.pool:
            raise ValueError(f"--rescue {self.rescue} needs --pool POOL (a pool evolved with `pool evolve`)")
        if self.route == "vote" and not (self.judges or self.judge_model):
            raise ValueError("--route vote needs a judge: --judges direction,behaviour or --judge-model SPEC")
        if (self.tasks_per_step * self.k) % self.micro_batches:
            raise ValueError(
                f"tasks_per_step × k ({self.tasks_per_step * self.k}) must divide by micro_batches "
                f"({self.micro_batches})"
            )
        return self

    @classmethod
    def build(cls, **values: Any) -> PolicyTrainConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness train policy") from None
