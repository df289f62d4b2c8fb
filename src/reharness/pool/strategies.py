"""Router strategies, one class each behind one protocol (:class:`RouteStrategy`), in one registry.

A strategy decides two things for the router (:mod:`.router`): how a sibling scores on a failed group
(the candidates' order and reasons) and which candidates the group tries (``choose``). Rank-1 asks a strategy
only whether judges vote among the siblings that beat H0.

- ``validation`` (default, the public recipe): the validation rescue rate measured at evolve time, weighted
  by the group's cluster mix; the top-k;
- ``profile``: the expected rescue for this cluster mix *and* task type from measured + learned evidence,
  plus an exploration bonus where evidence is thin; the top-k;
- ``vote``: the ``profile`` top-k, then every judge votes (``majority`` or ``borda``); ties and all-abstain
  fall back to the profile order;
- ``random``: a seeded shuffle (per task and per visit, so fixed seeds reproduce);
- ``oracle``: every sibling in pool order (the caller tries all: an upper bound costing |pool| rollouts).
"""

from __future__ import annotations

import random
from typing import ClassVar, Protocol

from reharness.core.hashing import derive_seed
from reharness.core.registry import Registry
from reharness.pool.decision import Candidate, JudgeVote, RouteContext


class Router(Protocol):
    """What a strategy uses of the router (:class:`reharness.pool.router.Router`)."""

    seed: int

    def sibling_ids(self) -> list[str]: ...

    async def votes_on(self, ctx: RouteContext, sibling_ids: list[str]) -> list[JudgeVote]: ...

    def aggregate(self, candidates: list[str], votes: list[JudgeVote]) -> list[str]: ...


class RouteStrategy(Protocol):
    """How a router scores siblings and picks the ones a failed group tries."""

    name: ClassVar[str]
    #: candidates are scored on validation evidence only (no learned outcomes, no task type)
    validation_only: ClassVar[bool]
    #: judges vote (the router needs at least one)
    votes: ClassVar[bool]

    async def choose(
        self, router: Router, ctx: RouteContext, candidates: list[Candidate], k: int, decision_id: str
    ) -> tuple[list[str], list[JudgeVote]]:
        """The sibling ids to try, best first, and the judges' votes (if any)."""
        ...


STRATEGIES: Registry[type[RouteStrategy]] = Registry("routing strategy")


class _TopK:
    votes: ClassVar[bool] = False
    validation_only: ClassVar[bool] = False

    async def choose(
        self, router: Router, ctx: RouteContext, candidates: list[Candidate], k: int, decision_id: str
    ) -> tuple[list[str], list[JudgeVote]]:
        return [c.sibling_id for c in candidates[:k]], []


@STRATEGIES.register("validation")
class ValidationStrategy(_TopK):
    name: ClassVar[str] = "validation"
    validation_only: ClassVar[bool] = True


@STRATEGIES.register("profile")
class ProfileStrategy(_TopK):
    name: ClassVar[str] = "profile"


@STRATEGIES.register("vote")
class VoteStrategy(_TopK):
    name: ClassVar[str] = "vote"
    votes: ClassVar[bool] = True

    async def choose(
        self, router: Router, ctx: RouteContext, candidates: list[Candidate], k: int, decision_id: str
    ) -> tuple[list[str], list[JudgeVote]]:
        top = [c.sibling_id for c in candidates[:k]]
        votes = await router.votes_on(ctx, top)
        return router.aggregate(top, votes), votes


@STRATEGIES.register("random")
class RandomStrategy(_TopK):
    name: ClassVar[str] = "random"

    async def choose(
        self, router: Router, ctx: RouteContext, candidates: list[Candidate], k: int, decision_id: str
    ) -> tuple[list[str], list[JudgeVote]]:
        ids = router.sibling_ids()
        random.Random(derive_seed(router.seed, ctx.task_identity, decision_id)).shuffle(ids)
        return ids[:k], []


@STRATEGIES.register("oracle")
class OracleStrategy(_TopK):
    name: ClassVar[str] = "oracle"

    async def choose(
        self, router: Router, ctx: RouteContext, candidates: list[Candidate], k: int, decision_id: str
    ) -> tuple[list[str], list[JudgeVote]]:
        return router.sibling_ids(), []


def make_strategy(name: str) -> RouteStrategy:
    """The strategy called ``name`` (an unknown name lists the close matches)."""
    return STRATEGIES.get(name)()
