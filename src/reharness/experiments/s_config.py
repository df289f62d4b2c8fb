"""The options and results of ``reharness experiment s`` (see :mod:`.s` for the protocol): the validated
:class:`SConfig`, the result rows and :meth:`SResult.contract` — the ``--json`` output. Shared by the
orchestration (:mod:`.s`), the evaluation (:mod:`.s_eval`) and the report (:mod:`.s_report`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reharness.core.errors import ConfigError, UnknownNameError, did_you_mean, options_error

#: Methods that train a policy, in training order; ``none-equal-rollouts`` is added by ``equal_rollouts``.
#: ``placebo``: rescue under a random placebo sibling (a neutral sentence); ``vote``: the router with the
#: ``vote`` strategy (the profile's top-k, then the judges vote); ``router``: the router with ``route``.
TRAINED = ("none", "resample", "random", "placebo", "vote", "router")
#: The methods whose rescues a router decides (they re-anchor and log decisions).
ROUTED = ("vote", "router")
EQUAL = "none-equal-rollouts"
START = "start"
#: pool evolve options of the default pool (the recipe of the shipped pools, README "Harness-S").
DEFAULT_EVOLVE: dict[str, Any] = {
    "generations": 1,
    "k": 3,
    "batch_size": 20,
    "valid_n": 40,
    "config_mutations": False,
}


class SConfig(BaseModel):
    """Options of ``reharness experiment s`` (validated; written to ``OUT/s_config.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    envs: list[str] = Field(min_length=1)
    agent: str = Field(
        "tiny:{env}-S", description="Starting policy (tiny:NAME, hf:DIR, pretrained:NAME); {env} replaced."
    )
    pool: str | None = Field(None, description="Pool directory ({env} replaced); None: evolve one per env.")
    methods: list[str] = Field(default_factory=lambda: list(TRAINED))
    route: Literal["validation", "profile", "vote", "random"] = Field(
        "validation", description="The router method's strategy (vote has its own method)."
    )
    vote_k: int = Field(3, ge=1, description="vote: the profile's top-k the judges vote among.")
    judge_model: str | None = Field(None, description="vote: also an LLM judge on this model spec.")
    profile_samples: int = Field(
        2, gt=0, le=64, description="Routed methods: sampled episodes per valid task when re-anchoring."
    )
    rewritten_turns: Literal["mask", "executed", "raw"] = Field(
        "mask", description="Turns a hook rewrote or forced: no loss (mask), the executed action, or raw."
    )
    steps: int = Field(20, gt=0, description="Optimizer steps of every method.")
    k: int = Field(8, ge=2, le=64, description="Rollouts per task (GRPO group).")
    tasks_per_step: int = Field(4, gt=0)
    temperature: float = Field(1.0, gt=0, description="Sampling temperature of training rollouts.")
    learning_rate: float = Field(2e-4, gt=0, description="GRPO learning rate of every method.")
    lora_rank: int = Field(0, ge=0, description="LoRA rank of every method's training (0: all weights).")
    unseen_tasks: bool = Field(
        False, description="Train every method only on train tasks the start policy never saw as demos."
    )
    test_n: int = Field(50, gt=0, description="Held-out test tasks every policy is evaluated on.")
    equal_rollouts: bool = Field(True, description="Also train none until its rollouts match router's.")
    reanchor_every: int = Field(
        10, ge=0, description="Router: re-anchor the profile every R steps (0: never)."
    )
    reanchor_n: int = Field(40, gt=0, description="Valid tasks per re-anchoring.")
    concurrency: int = Field(32, gt=0, le=1024, description="Episodes decoded together.")
    seed: int = 0
    test_seed: int | None = Field(
        None,
        description="Seed of the held-out test tasks (None: seed). Give several training seeds one fresh "
        "test seed, so every seed's policies meet the same tasks.",
    )
    out: str = "s"

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, methods: list[str]) -> list[str]:
        for method in methods:
            if method not in TRAINED:
                hint = did_you_mean(method, list(TRAINED))
                if method == "sibling-only":
                    hint = (
                        "sibling-only needs training inside a sibling, which `train policy` does not do yet"
                    )
                raise ValueError(f"unknown method {method!r} ({hint}; methods: {', '.join(TRAINED)})")
        if not methods:
            raise ValueError("name at least one method")
        return [m for m in TRAINED if m in methods]  # training order, each once

    @classmethod
    def build(cls, **values: Any) -> SConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness experiment s") from None

    def agent_for(self, env: str) -> str:
        return self.agent.replace("{env}", env)

    def pool_for(self, env: str) -> Path:
        """The pool directory of ``env``: ``--pool`` with ``{env}`` replaced, else ``OUT/ENV/pool``."""
        if self.pool is None:
            return Path(self.out) / env / "pool"
        return Path(self.pool.replace("{env}", env))

    @property
    def eval_seed(self) -> int:
        """The seed choosing the test tasks and their episode seeds."""
        return self.seed if self.test_seed is None else self.test_seed

    @property
    def micro_batches(self) -> int:
        """Gradient-accumulation chunks of a step: the largest of 4, 3, 2, 1 that divides its rows."""
        rows = self.tasks_per_step * self.k
        return next(d for d in (4, 3, 2, 1) if rows % d == 0)


def parse_methods(text: str) -> list[str]:
    """``--methods none,router`` → the list (each name checked, with did-you-mean)."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    for name in names:
        if name not in TRAINED:
            hint = did_you_mean(name, list(TRAINED))
            if name == "sibling-only":
                hint = "sibling-only (training inside one sibling) is not supported by `train policy` yet"
            raise UnknownNameError(
                f"unknown --methods entry {name!r}", hint=f"{hint}; known: {', '.join(TRAINED)}"
            )
    if not names:
        raise ConfigError("--methods names no method", hint=f"e.g. --methods {','.join(TRAINED)}")
    return names


class SRow(BaseModel):
    method: str
    env: str
    success: float
    ci_low: float
    ci_high: float
    rollouts: int
    delta_vs_start: float = 0.0
    delta_low: float = 0.0
    delta_high: float = 0.0
    n: int = 0
    alias: str | None = None
    target_code_rate: float = Field(
        0.0,
        description="Per episode in H0: share whose failure codes include one the pool's siblings target.",
    )
    target_delta: float = 0.0
    target_delta_low: float = 0.0
    target_delta_high: float = 0.0
    tokens: int = Field(0, description="Training tokens (rollouts + re-anchoring; the pool counted apart).")
    model_calls: int = 0
    vs: dict[str, list[float]] = Field(
        default_factory=dict, description="Paired Δ success [Δ, low, high] vs none and vs resample."
    )


class Rank1Row(BaseModel):
    env: str
    success: float
    ci_low: float
    ci_high: float
    delta_vs_h0: float = 0.0
    delta_low: float = 0.0
    delta_high: float = 0.0
    routing: dict[str, int] = Field(default_factory=dict)


class SResult(BaseModel):
    config: SConfig
    rows: list[SRow]
    rank1: list[Rank1Row]
    average: dict[str, float]
    siblings: dict[str, bool] = Field(default_factory=dict, description="env → the pool has siblings.")
    training: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    behaviour: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict, description="env → method → behaviour rates in H0 on the test tasks."
    )
    target_codes: dict[str, list[str]] = Field(
        default_factory=dict, description="env → the failure codes the pool's siblings' directions target."
    )
    pool_costs: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="env → the pool's evolution and profiling cost (counted once)."
    )
    oracle: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict, description="env → method → agreement of the rescue choice with the oracle."
    )
    learnable: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict,
        description="env → method → rescued successes learnable in H0 (rewritten turns).",
    )

    def contract(self) -> dict[str, Any]:
        """The ``--json`` output: ``{rows: [{method, env, success, ci_low, ci_high, rollouts,
        target_code_rate, tokens, model_calls}], rank1: [{env, success, ci_low, ci_high}], average: {method:
        success}}`` with the contract's method names only, plus ``equal_rollouts``: the same row shape for
        ``none`` trained on until its rollouts match router's."""
        keys = (
            "method", "env", "success", "ci_low", "ci_high", "rollouts", "target_code_rate", "tokens",
            "model_calls",
        )  # fmt: skip
        return {
            "rows": [{k: getattr(r, k) for k in keys} for r in self.rows if r.method != EQUAL],
            "rank1": [
                {k: getattr(r, k) for k in ("env", "success", "ci_low", "ci_high")} for r in self.rank1
            ],
            "average": {m: v for m, v in self.average.items() if m != EQUAL},
            "equal_rollouts": [
                {k: getattr(r, k) for k in keys} | {"method": "none"} for r in self.rows if r.method == EQUAL
            ],
        }
