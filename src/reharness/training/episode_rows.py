"""From episodes to GRPO training rows: token sequences, loss masks and group-normalised advantages.

**Rows.** A multi-turn episode is one flat sequence ``prompt₁ a₁ o₁ a₂ o₂ … a_T`` only when each turn's prompt
extends the previous prompt and reply token for token. That holds for an append-only context whose replies
re-tokenise to the sampled tokens, and fails for a history window, a transient ``before_decision`` message, a
hook that rewrote the last action, or a sampled reply whose re-tokenisation differs. :func:`episode_rows`
checks it per turn on the exact token ids: turns that continue the current row are appended to it (the
tokens between replies — observations and harness text — get loss mask 0); a turn that does not starts a new
row. Every row of an episode carries the episode's advantage. So the append-only case costs one row per
episode, and everything else is still trained exactly on what the policy read and sampled (per-turn rows
sharing the advantage), with no restriction on the harness. ``merged``/``split`` counts say which happened.

**Rewritten or forced turns** (``rewritten_turns``): ``mask`` — no loss on the policy's reply at that turn
(what it sampled is not what ran); ``raw`` — train on the policy's own reply as sampled; ``executed`` — train
on the executed action (``Action: <executed>`` encoded by the tokenizer) as the target: off-policy, flagged,
and always its own row (the next prompt does not continue it). Turns forced without a policy call have no
tokens and no row.

**Advantages** are TRL's: ``(r − mean(group)) / (std(group) + 1e-4)`` (``scale_rewards="group"``; ``batch``
takes the std over the batch, ``none`` only centres), with groups of any size (a mixed rescue group can be
larger than K), computed here because the groups are ours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reharness.training.rollouts import Rollout, Turn

RewrittenTurns = Literal["mask", "executed", "raw"]
ScaleRewards = Literal["group", "batch", "none"]
REWRITE_FLAGS = ("rewritten", "forced")


@dataclass
class Row:
    """One training row: ``prompt_ids`` then ``completion_ids``; ``loss_mask`` marks the policy's tokens."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    advantage: float = 0.0
    off_policy: bool = False

    @property
    def trained_tokens(self) -> int:
        return sum(self.loss_mask)


@dataclass
class RowStats:
    rows: int = 0
    merged_turns: int = 0  # turns appended to the row of an earlier turn (the flat, append-only case)
    split_turns: int = 0  # turns that had to start a row of their own
    masked_turns: int = 0  # rewritten/forced turns left out of the loss
    executed_turns: int = 0  # rewritten/forced turns trained on the executed action (off-policy)
    trained_tokens: int = 0

    def add(self, other: RowStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _rewritten(turn: Turn) -> bool:
    return any(flag in turn.flags for flag in REWRITE_FLAGS)


def episode_rows(
    rollout: Rollout,
    advantage: float,
    rewritten_turns: RewrittenTurns = "mask",
    encode_action: Callable[[str], list[int]] | None = None,
) -> tuple[list[Row], RowStats]:
    """The training rows of one episode (see the module docstring) and what building them did."""
    stats = RowStats()
    rows: list[Row] = []
    current: Row | None = None
    for turn in rollout.turns:
        completion, train, own_row = turn.completion_ids, 1, False
        if _rewritten(turn):
            if rewritten_turns == "mask":
                train = 0
                stats.masked_turns += 1
            elif rewritten_turns == "executed":
                if encode_action is None or turn.executed is None:
                    train = 0
                    stats.masked_turns += 1
                else:
                    completion, own_row = encode_action(turn.executed), True
                    stats.executed_turns += 1
        if current is not None and not own_row:
            seen = current.prompt_ids + current.completion_ids
            if turn.prompt_ids[: len(seen)] == seen and len(turn.prompt_ids) >= len(seen):
                between = turn.prompt_ids[len(seen) :]
                current.completion_ids += between + completion
                current.loss_mask += [0] * len(between) + [train] * len(completion)
                stats.merged_turns += 1
                continue
        if current is not None:
            rows.append(current)
        current = Row(list(turn.prompt_ids), list(completion), [train] * len(completion), advantage, own_row)
        stats.split_turns += 1
        if own_row:  # an off-policy target: nothing continues it
            rows.append(current)
            current = None
    if current is not None:
        rows.append(current)
    kept = [r for r in rows if r.trained_tokens > 0]
    stats.rows = len(kept)
    stats.trained_tokens = sum(r.trained_tokens for r in kept)
    return kept, stats


def _std(values: Sequence[float]) -> float:
    """Sample standard deviation (Bessel-corrected, as ``torch.std``); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def group_advantages(groups: Sequence[Sequence[float]], scale: ScaleRewards = "group") -> list[list[float]]:
    """Advantages per group member: reward minus the group mean, divided by the group's std + 1e-4
    (``group``), the batch's std (``batch``) or nothing (``none``)."""
    batch_std = _std([r for g in groups for r in g])
    out: list[list[float]] = []
    for rewards in groups:
        mean = sum(rewards) / len(rewards) if rewards else 0.0
        std = _std(rewards) if scale == "group" else batch_std
        out.append([(r - mean) / (std + 1e-4) if scale != "none" else r - mean for r in rewards])
    return out


def pad_rows(rows: list[Row], multiple: int) -> list[Row]:
    """Append empty rows (nothing to train, advantage 0) so that ``len(rows)`` divides by ``multiple``:
    TRL splits a generation batch into that many equal chunks and would drop a remainder."""
    missing = (-len(rows)) % multiple
    if not rows:
        missing = multiple
    filler = rows[0].prompt_ids[:1] if rows else [0]
    return rows + [Row(list(filler), list(filler), [0], 0.0) for _ in range(missing)]
