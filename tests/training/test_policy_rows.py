"""Episodes → GRPO rows: exact-token merging of append-only turns, splitting otherwise, rewritten turns,
group-normalised advantages (TRL's formula) and padding to TRL's chunk count."""

from __future__ import annotations

import math

import pytest

from reharness.store.records import EpisodeRecord
from reharness.training.episode_rows import episode_rows, group_advantages, pad_rows
from reharness.training.rollouts import Rollout, Turn


def rollout(turns: list[Turn]) -> Rollout:
    record = EpisodeRecord(
        run_id="r",
        episode_index=0,
        seed=0,
        env="household",
        task_id="t",
        task_identity="i",
        task_type="pick",
        instruction="x",
        initial_observation="o",
        harness_id="h",
        policy_id="p",
    )
    return Rollout(record, turns, "H0", "h0", 0)


def turn(
    prompt: list[int], completion: list[int], flags: list[str] | None = None, executed: str | None = None
):
    return Turn(prompt, completion, [-0.5] * len(completion), flags or [], executed)


def test_append_only_turns_become_one_row_with_observations_masked() -> None:
    t1 = turn([1, 2, 3], [10, 11, 2])
    t2 = turn([1, 2, 3, 10, 11, 2, 7, 8], [12, 2])  # continues prompt + reply, then observation 7 8
    t3 = turn([1, 2, 3, 10, 11, 2, 7, 8, 12, 2, 9], [13, 2])
    rows, stats = episode_rows(rollout([t1, t2, t3]), 0.75)
    assert len(rows) == 1 and stats.merged_turns == 2 and stats.split_turns == 1
    row = rows[0]
    assert row.prompt_ids == [1, 2, 3]
    assert row.completion_ids == [10, 11, 2, 7, 8, 12, 2, 9, 13, 2]
    assert row.loss_mask == [1, 1, 1, 0, 0, 1, 1, 0, 1, 1]
    assert row.advantage == 0.75 and stats.trained_tokens == 7


def test_a_turn_that_does_not_continue_the_tokens_starts_its_own_row() -> None:
    # a history window (or re-tokenisation drift) changes the prefix: no flat sequence is possible
    t1 = turn([1, 2, 3], [10, 2])
    t2 = turn([1, 2, 4, 10, 2, 7], [12, 2])  # token 3 differs
    t3 = turn([1, 2, 4, 10, 2, 7, 12, 2, 8], [13, 2])  # continues t2
    rows, stats = episode_rows(rollout([t1, t2, t3]), -1.0)
    assert [r.prompt_ids for r in rows] == [[1, 2, 3], [1, 2, 4, 10, 2, 7]]
    assert rows[1].completion_ids == [12, 2, 8, 13, 2]
    assert rows[1].loss_mask == [1, 1, 0, 1, 1]
    assert stats.split_turns == 2 and stats.merged_turns == 1
    assert all(r.advantage == -1.0 for r in rows)


@pytest.mark.parametrize("mode", ["mask", "raw", "executed"])
def test_rewritten_turns(mode: str) -> None:
    t1 = turn([1, 2], [10, 2], flags=["rewritten"], executed="open drawer 1")
    t2 = turn([1, 2, 10, 2, 5], [11, 2])

    def encode(action: str) -> list[int]:
        return [40 + len(action), 2]

    rows, stats = episode_rows(rollout([t1, t2]), 1.0, mode, encode)  # type: ignore[arg-type]
    if mode == "mask":
        assert len(rows) == 1 and rows[0].loss_mask == [0, 0, 0, 1, 1] and stats.masked_turns == 1
    elif mode == "raw":
        assert len(rows) == 1 and rows[0].loss_mask == [1, 1, 0, 1, 1] and stats.masked_turns == 0
    else:  # the executed action is the (off-policy) target, on a row of its own
        assert stats.executed_turns == 1 and len(rows) == 2
        assert rows[0].completion_ids == [53, 2] and rows[0].off_policy and rows[0].loss_mask == [1, 1]
        assert rows[1].prompt_ids == [1, 2, 10, 2, 5] and not rows[1].off_policy


def test_rows_without_trained_tokens_are_dropped() -> None:
    rows, stats = episode_rows(rollout([turn([1], [5, 2], flags=["forced"])]), 1.0, "mask")
    assert rows == [] and stats.rows == 0 and stats.masked_turns == 1


def test_group_advantages_follow_trls_formula() -> None:
    groups = [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0], [1.0, 1.0, 0.0]]
    adv = group_advantages(groups, "group")
    std = math.sqrt((0.75**2 + 3 * 0.25**2) / 3)  # Bessel-corrected, as torch.std
    assert adv[0][0] == pytest.approx(0.75 / (std + 1e-4)) and adv[0][1] == pytest.approx(
        -0.25 / (std + 1e-4)
    )
    assert adv[1] == [0.0, 0.0]  # an all-failed group: no gradient
    assert sum(adv[2]) == pytest.approx(0.0, abs=1e-9)  # groups may have any size (mixed rescue groups)
    assert group_advantages(groups, "none")[0] == [0.75, -0.25, -0.25, -0.25]
    import torch

    rewards = torch.tensor(groups[0])
    expected = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    assert adv[0] == pytest.approx(expected.tolist(), rel=1e-5)


def test_pad_rows_makes_the_count_divide_by_the_chunks() -> None:
    rows, _ = episode_rows(rollout([turn([1, 2], [3, 2])]), 1.0)
    padded = pad_rows(rows * 3, 4)
    assert len(padded) == 4 and padded[-1].trained_tokens == 0 and padded[-1].advantage == 0.0
    assert len(pad_rows(rows * 4, 4)) == 4
    assert len(pad_rows([], 2)) == 2
