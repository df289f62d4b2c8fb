"""Model selection on the ``valid`` split: the mean Δ_B of an engineer's greedy patch per valid packet.

For every valid packet the engineer (a model directory, prompted as it was trained) writes one greedy reply,
which is scored exactly like a GRPO completion (:class:`.rerun.PairedRerunReward`: paired rerun on the
packet's recorded tasks and seeds, invalid ⇒ 0). GRPO scores its starting SFT engineer and its result this
way, so ``engineer.json`` says whether the RL stage helped on packets it never trained on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reharness.runtime.agents import Agent


async def _replies(model_dir: Path, rows: list[dict[str, Any]], seed: int) -> list[str]:
    from reharness.engineer.factory import make_engineer
    from reharness.failures.packets import FailurePacket

    engineer = make_engineer(f"hf:{model_dir}", temperature=0.0)
    try:
        replies = []
        for row in rows:
            packet = FailurePacket.model_validate_json(row["packet"])
            replies.append((await engineer.propose(packet, 1, seed=seed))[0].raw_reply)
        return replies
    finally:
        await engineer.close()


def valid_score(
    model_dir: str | Path,
    rows: list[dict[str, Any]],
    runs_dir: str | Path,
    agents: Mapping[str, Agent] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"mean_delta", "valid", "packets", "replies"}`` of the engineer in ``model_dir`` on the packet
    ``rows`` (``replies``: its greedy reply per packet, in row order)."""
    from reharness.training.rerun import PairedRerunReward

    if not rows:
        return {"mean_delta": None, "valid": 0, "packets": 0, "replies": []}
    replies = asyncio.run(_replies(Path(model_dir), rows, seed))
    reward = PairedRerunReward(rows, runs_dir, agents=agents)
    try:
        texts = reward.results(replies, [r["packet_id"] for r in rows])
    finally:
        reward.close()
    deltas = [r.delta if r.valid else 0.0 for r in texts]
    return {
        "mean_delta": round(sum(deltas) / len(deltas), 6),
        "valid": sum(r.valid for r in texts),
        "packets": len(rows),
        "replies": replies,
    }
