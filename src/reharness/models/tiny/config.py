"""Typed recipes of the tiny agents: model shape, data and optimisation per (environment, size).

A :class:`Recipe` fully determines a tiny agent together with the seed: ``reharness agent train --env ENV
--size S --seed 0`` rebuilds the shipped agent from :func:`recipe_for` (the numbers behind each choice are in
``RECIPE.md``). Overrides (``--steps``, ``--batch-size``…) produce a different, recorded recipe.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.errors import ConfigError
from reharness.envs.registry import BUILTIN_KITS, find_kit

Size = Literal["S", "M", "micro"]
SIZES: tuple[str, ...] = ("S", "M")


class ModelShape(BaseModel):
    """A small Llama-style decoder (RoPE, SwiGLU, RMSNorm, tied embeddings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hidden_size: int = Field(128, gt=0)
    num_layers: int = Field(4, gt=0)
    num_heads: int = Field(4, gt=0)
    num_kv_heads: int = Field(4, gt=0)
    intermediate_size: int = Field(384, gt=0)
    vocab_size: int = Field(2048, gt=16, description="Upper bound; the BPE may learn fewer tokens.")
    max_position_embeddings: int = Field(16384, gt=0)

    def llama_config_kwargs(self, vocab_size: int) -> dict[str, Any]:
        return {
            "vocab_size": vocab_size,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
            "tie_word_embeddings": True,
            "rope_theta": 10000.0,
        }


class Recipe(BaseModel):
    """Everything that decides a tiny agent besides the seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    size: str
    model: ModelShape = Field(default_factory=ModelShape)
    steps: int = Field(600, gt=0, description="Optimizer steps.")
    batch_size: int = Field(4, gt=0, description="Whole episodes per optimizer step.")
    epochs: float = Field(
        1.0, gt=0, description="Passes over the demonstrations (demos = steps*batch/epochs)."
    )
    learning_rate: float = Field(2e-3, gt=0)
    warmup_ratio: float = Field(0.05, ge=0, lt=1)
    decay_ratio: float = Field(0.25, gt=0, le=1, description="Final share of steps with the LR cooldown.")
    weight_decay: float = Field(0.01, ge=0)
    perturb_prob: float = Field(
        0.12, ge=0, lt=1, description="Share of solver turns replaced by perturbations."
    )
    repeat_prob: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Chance that a perturbed turn is repeated on the next turn (runs of the same mistake).",
    )
    near_miss: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of perturbations that are near misses of the expert's action (kit's near_miss).",
    )
    thoughts: bool = Field(False, description="Demos write a 'Think:' state summary before each action.")
    interventions: bool = Field(
        False, description="Demos contain harness hints, blocks and reminders that the expert heeds."
    )
    observed_notes: bool = Field(
        False,
        description="Intervention notes say only what a harness can observe, never the expert's action "
        "(observed_notes.py).",
    )
    copy_warmup_steps: int = Field(
        0, ge=0, description="Most steps of synthetic copy warm-up before the demos (0: none)."
    )
    copy_warmup_lr: float = Field(1e-3, gt=0)
    copy_warmup_target: float | None = Field(
        0.8, gt=0, le=1, description="Stop the warm-up once held-out copy accuracy reaches this."
    )
    split_spaces: bool = Field(False, description="Spaces are their own tokens (copy-exact words).")
    context_loss: bool = Field(
        False, description="Also train on non-assistant tokens (domain LM); perturbed turns never."
    )
    max_length: int = Field(4096, gt=0, description="Episodes are truncated to this many tokens.")
    max_new_tokens: int = Field(64, gt=0, description="Reply budget used when evaluating.")

    @property
    def num_demos(self) -> int:
        return max(1, round(self.steps * self.batch_size / self.epochs))

    def with_overrides(self, **overrides: Any) -> Recipe:
        fields = {k: v for k, v in overrides.items() if v is not None}
        model_fields = {k: fields.pop(k) for k in list(fields) if k in ModelShape.model_fields}
        data = self.model_dump()
        data["model"] = data["model"] | model_fields
        return Recipe.model_validate(data | fields)


#: two layers: the copy warm-up's phase change comes ~300 steps earlier than with four, and each token is
#: twice as cheap, so a 30-minute budget buys twice the demonstrations (RECIPE.md)
_S = ModelShape(hidden_size=128, num_layers=2, num_heads=4, num_kv_heads=4, intermediate_size=384)
#: wider, not deeper (two layers keep the early copy phase change): about twice the S parameters and 1.6x the
#: cost per step; M recipes still train within the 30-minute budget at 2 threads (RECIPE.md)
_M = ModelShape(hidden_size=192, num_layers=2, num_heads=6, num_kv_heads=6, intermediate_size=512)
MICRO = ModelShape(
    hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=2, intermediate_size=64, vocab_size=400
)

#: What every shipped S recipe shares (RECIPE.md): 2 layers, the copy warm-up, split spaces, lr 1e-3,
#: 8 episodes per step.
_S_BASE: dict[str, Any] = dict(
    size="S", model=_S, batch_size=8, learning_rate=1e-3, copy_warmup_steps=2500, split_spaces=True
)

_M_BASE: dict[str, Any] = _S_BASE | {"size": "M", "model": _M}
_BASES: dict[str, dict[str, Any]] = {"S": _S_BASE, "M": _M_BASE}


def kit_recipes(env: str) -> dict[str, Recipe]:
    """The recipes of ``env``'s kit (``EnvKit.tiny.recipes``: size -> fields beyond or replacing the shared
    base's, e.g. ``batch_size``)."""
    kit = find_kit(env)
    if kit is None:
        return {}
    spec = getattr(kit, "tiny", None)
    if spec is None:  # a kit with no recipe (a gym:ID): the shared S recipe, trained on the env's solver
        return {"S": Recipe(**_S_BASE, env=kit.name)}
    return {
        size: Recipe(**(_BASES.get(size, _S_BASE) | {"size": size} | dict(fields)), env=kit.name)
        for size, fields in spec.recipes.items()
    }


def recipes() -> dict[tuple[str, str], Recipe]:
    """Every built-in kit's tiny-agent recipes, by (env, size)."""
    return {(env, size): r for env in BUILTIN_KITS for size, r in kit_recipes(env).items()}


def recipe_for(env: str, size: str) -> Recipe:
    """The recipe of a built-in tiny agent (``micro``: a seconds-long configuration for tests)."""
    own = kit_recipes(env)
    envs = sorted({e for e, _ in recipes()})
    if size == "micro":
        base = own.get("S")
        if base is None:
            raise ConfigError(f"no tiny-agent recipe for env {env!r}", hint=f"use --env one of {envs}")
        # seconds, whatever the S recipe: no copy warm-up (it runs up to thousands of steps)
        micro = {"size": "micro", "model": MICRO, "steps": 4, "batch_size": 2, "copy_warmup_steps": 0}
        return base.model_copy(update=micro)
    recipe = own.get(size)
    if recipe is None:
        raise ConfigError(
            f"no tiny-agent recipe for env {env!r} size {size!r}",
            hint=f"use --env one of {envs} and --size one of {list(SIZES)}",
        )
    return recipe
