"""``SelfRefineEngineer``: the Self-Refine style fixed-rule baseline.

Whatever the evidence, it proposes the same generic reflection rule: before every decision after the first,
a ``make_pre_hint`` message asking the agent to reflect on the previous observation and, if its last action
failed or changed nothing, to try a different one. The ``n`` proposals differ only in the wording (a seeded
choice among fixed phrasings), so comparing against it isolates what evidence-driven repairs add — in
Harness-R1's results this baseline is below the unpatched default (REFERENCE.md §1). The hint is text only,
so every environment honours it (db included).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from reharness.core.hashing import derive_seed
from reharness.engineer.base import Engineer, Proposal, finish_patch, render_reply
from reharness.patches.model import Patch

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket

#: The phrasings of the one rule; proposal wording is drawn from these.
WORDINGS: tuple[str, ...] = (
    "Reflect on the previous observation before acting. If your last action failed or changed nothing, "
    "try a different action.",
    "Before you act, think about what the last observation tells you. If the last action did not work, do "
    "not repeat it: choose another one.",
    "Pause and review the result of your previous action. When it failed or made no progress, change your "
    "approach instead of repeating it.",
    "Check the last observation carefully. If your previous step was not successful, correct it with a "
    "different action.",
    "Look back at what just happened. A failed or useless action should not be repeated; pick a better one.",
    "Reflect: did your last action achieve what you wanted? If not, try something different this time.",
    "Review your previous step and its outcome. If it was an error or had no effect, revise your plan and "
    "take a different action.",
    "Think about the feedback you just received. If it shows that your last action failed, adjust and try "
    "an alternative.",
)
CODE = """
def hook(ctx, nb):
    if int(ctx.get("step") or 0) == 0:
        return None
    return {"message": <<message>>}
"""
DESCRIPTION = "Self-Refine baseline: a fixed reflection reminder before every decision after the first."


def reflection_patch(env: str | None, wording: int = 0) -> Patch:
    """The baseline's patch with phrasing ``wording`` (an index into :data:`WORDINGS`)."""
    message = WORDINGS[wording % len(WORDINGS)]
    code = CODE.replace("<<message>>", repr(message)).lstrip("\n")
    return Patch({"before_decision": code}, DESCRIPTION, env, {"engineer": "self-refine"})


class SelfRefineEngineer(Engineer):
    """The ``self-refine`` engineer (see the module docstring)."""

    name = "self-refine"

    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        order = list(range(len(WORDINGS)))
        random.Random(derive_seed("self-refine", seed)).shuffle(order)
        env = packet.header.benchmark
        thinking = (
            "Self-Refine baseline: the same generic reflection rule whatever the failures show; "
            "only the wording varies between proposals."
        )
        proposals = []
        for i in range(n):
            wording = order[i % len(order)]
            patch = reflection_patch(env, wording)
            meta = {"engineer": self.name, "index": i, "seed": seed, "wording": wording}
            proposals.append(finish_patch(patch, render_reply(patch, thinking), packet, meta))
        return proposals
