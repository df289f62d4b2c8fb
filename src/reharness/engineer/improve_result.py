"""The data of ``reharness improve``: its validated config and its result (rounds, candidate rows, the
held-out paired result). Shared by the loop (:mod:`.improve`) and the reports (:mod:`.report`), so that
neither imports the other for its types."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reharness.core.errors import ConfigError, options_error
from reharness.engineer.llm import ModelEngineerOptions
from reharness.measure.paired import PairedResult


class ImproveConfig(BaseModel):
    """Options of ``reharness improve`` (validated; errors become :class:`ConfigError`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    agent: str
    engineer: str
    batch_size: int = Field(20, gt=0)
    batch_split: str = Field(
        "train",
        description="Split the rounds' batches come from: train, or valid when the target has memorised its "
        "training tasks (a tiny agent on a benchmark whose folds use different objects).",
    )
    k: int = Field(4, gt=0, le=64)
    rounds: int = Field(1, gt=0, le=100)
    max_regressions: int = Field(1, ge=0)
    eval_split: str = "test"
    eval_n: int = Field(200, gt=0)
    seed: int = 0
    out: str = "improve"
    harness: str | None = Field(
        None,
        description="Harness YAML the loop starts from (fields override the env's base harness; "
        "--max-steps applies on top). Default: the env's base harness.",
    )
    max_steps: int | None = Field(None, gt=0)
    concurrency: int = Field(8, gt=0, le=256)
    candidate_timeout_s: float | None = Field(
        1800.0,
        gt=0,
        description="Seconds a candidate's paired rerun may take (None: no limit); past it the candidate "
        "scores 0 as timed out and keeps its finished episodes for a later invocation.",
    )
    prefix_reuse: bool = True
    retry_errors: bool = False
    agent_options: dict[str, str] = Field(
        default_factory=dict, description="The target backend's options (--device, --gguf-file)."
    )
    engineer_options: ModelEngineerOptions = Field(
        default_factory=ModelEngineerOptions,
        description="How a model engineer is prompted and decodes (--engineer-prompt, --engineer-language, "
        "--engineer-constrain, --engineer-max-tokens).",
    )

    @model_validator(mode="after")
    def _batches_are_not_held_out(self) -> ImproveConfig:
        if self.batch_split == self.eval_split:
            raise ConfigError(
                f"--batch-split and --eval-split are both {self.eval_split!r}: patches would be chosen "
                "on the tasks they are then judged on",
                hint="choose patches on train or valid and judge them on test (the default)",
            )
        return self

    @model_validator(mode="after")
    def _engineer_options_need_a_model(self) -> ImproveConfig:
        if self.engineer_options.given:
            from reharness.engineer.factory import check_engineer_spec

            kind, _ = check_engineer_spec(self.engineer)
            if kind != "llm":
                raise ConfigError(
                    f"--engineer-prompt/-language/-constrain/-max-tokens set how a model engineer is "
                    f"prompted; --engineer {self.engineer!r} writes its patches without a model",
                    hint="drop them, or give a model engineer: --engineer llm:BACKEND or hf:PATH",
                )
        return self

    @classmethod
    def build(cls, **values: Any) -> ImproveConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness improve") from None


class CandidateRow(BaseModel):
    """One row of the candidate table."""

    round: int
    id: str
    valid: bool
    status: str
    reason: str | None = None
    patch_id: str | None = None
    description: str = ""
    delta: float = 0.0
    success_delta: float = 0.0
    rescued: int = 0
    broken: int = 0
    rescued_ids: list[str] = Field(default_factory=list)
    broken_ids: list[str] = Field(default_factory=list)
    ci_low: float = 0.0
    ci_high: float = 0.0
    effect_steps: int = 0
    hook_errors: int = 0
    model_calls: int = 0
    reused_calls: int = 0
    policy_errors: int = 0
    env_errors: int = 0
    accepted: bool = False


class RoundSummary(BaseModel):
    round: int
    batch_seed: int
    batch_size: int
    baseline_success: float
    baseline_score: float
    failures: int
    proposals: int
    valid_proposals: int
    accepted: str | None = None
    baseline_model_calls: int = 0
    policy_errors: int = 0
    env_errors: int = 0


class ImproveResult(BaseModel):
    config: ImproveConfig
    rounds: list[RoundSummary] = Field(default_factory=list)
    candidates: list[CandidateRow] = Field(default_factory=list)
    stack: list[str] = Field(default_factory=list, description="Accepted patch files, in overlay order.")
    patch_path: str | None = None
    heldout: PairedResult | None = None

    @property
    def accepted(self) -> bool:
        return bool(self.stack)

    def contract(self) -> dict[str, Any]:
        """The ``--json`` output (exact keys; held-out delta and interval are of the success rate)."""
        heldout = None
        if self.heldout is not None:
            h = self.heldout
            heldout = {
                "baseline_success": h.baseline_success,
                "patched_success": h.patched_success,
                "delta": h.success_delta,
                "ci_low": h.success_ci_low,
                "ci_high": h.success_ci_high,
                "n": h.n,
            }
        return {
            "accepted": self.accepted,
            "patch_path": self.patch_path,
            "candidates": [
                {"id": c.id, "valid": c.valid, "delta": c.delta, "rescued": c.rescued, "broken": c.broken}
                for c in self.candidates
            ],
            "heldout": heldout,
        }
