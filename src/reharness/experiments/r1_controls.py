"""The control rows of ``reharness experiment r1``'s main table (issue 38), on the same test batches.

- ``grpo-shuffled``: the GRPO engineer trained with each group's measured rewards permuted across its
  completions (``GRPOStageConfig.reward_control="shuffled"``: the same reruns and updates, no link between a
  reply and its outcome). Trained by :func:`reharness.experiments.r1_stages.train` beside the real GRPO, from
  the same SFT engineer, packets and seed; evaluated like ``grpo``.
- ``placebo``: a valid patch that changes nothing the agent reads (:func:`placebo_patch`: one hook that counts
  steps in its own notebook and returns None). It is measured like every patch — installed in the harness,
  the batch rerun on the same tasks and seeds — but *without prefix reuse* (every step of every episode runs
  the target again, with the hook in place) and *scored by its rerun*: the degenerate rule (no hook effect ⇒
  scored as no patch) would give it the baseline's numbers by definition, which measures nothing. So the row
  says what installing a patch, any patch, does to these targets (sandboxed hooks, their latency, the
  harness path with an overlay); it equals ``none`` exactly when the target is deterministic and the
  installation is inert.
- ``placebo-text``: the Self-Refine patch's shape — a message before every decision after the first — with a
  sentence of the same length that says nothing about the task (:func:`placebo_text_patch`), measured like
  any patch. Self-Refine falls far below no patch on the tiny agents; if this row falls as far, the collapse
  is about any added text, not about what Self-Refine's text says.
- ``best-of-n``: matched-budget search. The teacher (``config.teacher``, the operators by default) writes
  ``N`` patches for the test packet (its first is the ``operators`` row's patch: same seed), each is
  measured by paired rerun on a *train* batch of the same environment (train batch ``index mod batches``,
  its stored baseline), and the best one — valid, Δ ≥ 0, highest Δ, the teacher's order breaking ties; the
  teacher's first when none qualifies — is measured on the test batch like any method's patch. ``N`` spends
  the reruns GRPO spent in training: GRPO's reruns (its scored replies that were rerun: every one but the
  unparsable or invalid ones, ``grpo/rewards.jsonl``) divided by the test packets (environments × test
  batches), rounded, at least 1 (:func:`best_of_n_budget`). The test split never chooses anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.core.hashing import derive_seed
from reharness.engineer.base import Engineer, Proposal, finish_patch, render_reply
from reharness.patches.model import Patch

if TYPE_CHECKING:
    from reharness.experiments.r1_stages import R1Config
    from reharness.failures.packets import FailurePacket
    from reharness.runtime.agents import Agent

PLACEBO_HOOK = """def hook(ctx, nb):
    nb["placebo_steps"] = int(nb.get("placebo_steps") or 0) + 1
    return None
"""


#: as long as Self-Refine's wordings (~100–130 characters), about nothing
PLACEBO_TEXT = (
    "This line is a placeholder added by the harness. It carries no information about the task, the last "
    "step or the next one."
)
PLACEBO_TEXT_HOOK = """def hook(ctx, nb):
    if int(ctx.get("step") or 0) == 0:
        return None
    return {"message": <<message>>}
""".replace("<<message>>", repr(PLACEBO_TEXT))


def placebo_text_patch(env: str) -> Patch:
    """Self-Refine's patch shape (a message before every decision after the first) with content-free text."""
    return Patch(
        {"before_decision": PLACEBO_TEXT_HOOK},
        "[placebo-text] A content-free sentence before every decision after the first.",
        env,
        {"engineer": "placebo-text"},
    )


def placebo_patch(env: str) -> Patch:
    """A valid patch that changes nothing the agent reads: it writes only to its own notebook."""
    return Patch(
        {"before_decision": PLACEBO_HOOK},
        "[placebo] Count the steps in the patch's own notebook; show and change nothing.",
        env,
        {"engineer": "placebo"},
    )


class PlaceboEngineer(Engineer):
    """Writes :func:`placebo_patch` (``text``: :func:`placebo_text_patch`) for every packet."""

    def __init__(self, text: bool = False) -> None:
        self.text = text
        self.name = "placebo-text" if text else "placebo"

    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        env = packet.header.benchmark
        patch = placebo_text_patch(env) if self.text else placebo_patch(env)
        reply = render_reply(patch, "Placebo control: a patch that changes nothing the agent reads.")
        return [finish_patch(patch, reply, packet, {"engineer": self.name, "index": i}) for i in range(n)]


def grpo_reruns(train_dir: Path) -> int:
    """The paired reruns GRPO spent in training: its scored replies that were rerun (``rewards.jsonl``)."""
    path = train_dir / "grpo" / "rewards.jsonl"
    if not path.is_file():
        return 0
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sum(1 for line in lines if line.get("status") != "invalid")


def best_of_n_budget(config: R1Config) -> dict[str, int]:
    """``{"n", "grpo_reruns", "test_packets"}``: N such that N reruns per test packet spend GRPO's reruns."""
    reruns = grpo_reruns(Path(config.out) / "train")
    packets = len(config.envs) * config.test_batches
    return {"n": max(1, round(reruns / packets)), "grpo_reruns": reruns, "test_packets": packets}


def _train_row(config: R1Config, env: str, index: int) -> dict[str, Any]:
    from reharness.training.data import packet_rows, read_records

    rows = [
        r for r in packet_rows(read_records(Path(config.out) / "train" / "data"), "train") if r["env"] == env
    ]
    if not rows:  # a train batch without failures has no packet row: use any recorded batch of the env
        raise RuntimeError(f"best-of-n: no train packet of {env!r} to choose on")
    return rows[index % len(rows)]


async def best_of_n(
    config: R1Config, agent: Agent, env: str, index: int, packet: FailurePacket, seed: int, n: int
) -> tuple[Proposal, dict[str, Any]]:
    """The teacher's best of ``n`` patches for ``packet``, chosen on a train batch of ``env`` (see the module
    docstring), and what the choice saw (its train batch, each candidate's Δ and status)."""
    from reharness.engineer.factory import make_engineer
    from reharness.measure.paired import Candidate, evaluate_candidates
    from reharness.training.rerun import row_baseline

    teacher = make_engineer(config.teacher)
    try:
        proposals = await teacher.propose(packet, n, seed=derive_seed(seed, "operators") % 2**31)
    finally:
        await teacher.close()
    row = _train_row(config, env, index)
    runs = Path(config.out) / "train" / "data" / "runs"
    base = await row_baseline(row, agent, runs)
    results = await evaluate_candidates(
        [Candidate.of(f"best-of-{i}", p) for i, p in enumerate(proposals)],
        base,
        agent,
        runs,
        evidence=packet.leakage_evidence(),
    )
    ranked = [(r.delta, -i) for i, r in enumerate(results) if r.valid and r.delta >= 0]
    chosen = -max(ranked)[1] if ranked else 0
    meta = {
        "n": n,
        "train_packet": row["packet_id"],
        "chosen": chosen,
        "train_deltas": [r.delta for r in results],
        "train_status": [r.status for r in results],
    }
    return proposals[chosen], meta
