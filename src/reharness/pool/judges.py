"""Judges for the router's ``vote`` strategy: interpretable rule judges and LLM judges through any backend.

A judge looks at a group's :class:`~reharness.pool.decision.RouteContext` and the k candidate siblings (with
their descriptions and profile rows) and returns a :class:`~reharness.pool.decision.JudgeVote`: a ranking
of candidate ids, first = its vote, or an empty ranking (abstain). Judges never raise on bad model output:

- :class:`DirectionJudge`: the candidates whose direction's cluster holds the group's dominant failure code,
  then by the share of the group's cluster mix their direction covers;
- :class:`BehaviourJudge`: the candidates whose measured behaviour best counters the group's signals (few
  invalid actions where the group's actions were rejected, few repeats where it looped, short episodes where
  it ran out of steps);
- :class:`LLMJudge`: a model (``llm:openai:MODEL@URL``, ``tiny:NAME``, any :func:`make_agent` spec) shown the
  failure summary and the candidates; it abstains on a malformed reply, a reply naming no (or several)
  candidates, or a server error, and counts its calls and tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reharness.core.agent import Agent
from reharness.core.hashing import derive_seed
from reharness.core.types import ChatRequest, Message, SamplingParams
from reharness.pool.decision import JudgeVote, RouteContext
from reharness.pool.directions import Direction
from reharness.pool.profile import ProfileCell
from reharness.pool.sibling import Sibling


@dataclass(frozen=True)
class CandidateView:
    """A candidate as judges see it: the sibling, its direction and its profile rows for this group."""

    sibling_id: str
    sibling: Sibling
    direction: Direction | None
    cell: ProfileCell  # the evidence summed over the group's clusters
    type_cell: ProfileCell  # the evidence for the group's task type

    @property
    def id(self) -> str:
        return self.sibling_id

    def row(self) -> str:
        c, t = self.cell, self.type_cell
        low, high = c.rescue_ci
        return (
            f"rescued {c.rescues}/{c.h0_failures} of this cluster mix (95% CI {low:.2f}-{high:.2f}), "
            f"{t.rescues}/{t.h0_failures} of this task type; invalid-action rate {c.invalid_rate:.2f}, "
            f"repeat rate {c.repeat_rate:.2f}, mean steps {c.mean_steps:.1f}"
        )


class Judge(Protocol):
    name: str

    async def vote(self, context: RouteContext, candidates: Sequence[CandidateView]) -> JudgeVote: ...


class DirectionJudge:
    """Vote for the direction whose cluster holds the group's dominant failure code."""

    name = "direction"

    async def vote(self, context: RouteContext, candidates: Sequence[CandidateView]) -> JudgeVote:
        code = context.dominant_code()
        if code is None:
            return JudgeVote(judge=self.name, reason="the group has no failure codes")

        def key(item: tuple[int, CandidateView]) -> tuple[int, float, int]:
            index, cand = item
            holds = cand.direction is not None and code in cand.direction.codes
            share = context.cluster_mix.get(cand.sibling.direction, 0.0)
            return (-int(holds), -share, index)

        ranked = sorted(enumerate(candidates), key=key)
        if not any(c.direction is not None and code in c.direction.codes for _, c in ranked):
            return JudgeVote(judge=self.name, reason=f"no candidate's direction covers {code}")
        best = ranked[0][1]
        return JudgeVote(
            judge=self.name,
            ranking=[c.id for _, c in ranked],
            reason=f"dominant failure code {code} lies in {best.sibling.direction}'s cluster",
        )


class BehaviourJudge:
    """Vote for the sibling whose behaviour rates best counter the group's signals."""

    name = "behaviour"

    async def vote(self, context: RouteContext, candidates: Sequence[CandidateView]) -> JudgeVote:
        f = context.features
        steps = max(1.0, f.mean_steps * max(1, context.group_size))
        weights = {
            "invalid": (f.error_types.get("invalid_action", 0) + f.error_types.get("format_error", 0))
            / steps,
            "repeat": f.repeated_actions / steps,
            "length": context.failure_codes.get("step_limit", 0) / max(1, context.group_size),
        }
        if not any(weights.values()):
            return JudgeVote(
                judge=self.name, reason="the group shows no invalid actions, repeats or step limits"
            )
        seen = [c for c in candidates if c.cell.observed]
        if not seen:
            return JudgeVote(judge=self.name, reason="no candidate has measured behaviour")
        longest = max(c.cell.mean_steps for c in seen) or 1.0

        def badness(cand: CandidateView) -> float:
            c = cand.cell
            return (
                weights["invalid"] * c.invalid_rate
                + weights["repeat"] * c.repeat_rate
                + weights["length"] * c.mean_steps / longest
            )

        order = {c.id: i for i, c in enumerate(candidates)}
        ranked = sorted(seen, key=lambda c: (badness(c), order[c.id]))
        top = max(weights, key=lambda k: weights[k])
        return JudgeVote(
            judge=self.name,
            ranking=[c.id for c in ranked],
            reason=f"the group's main signal is {top}; {ranked[0].sibling.name} counters it best "
            f"(badness {badness(ranked[0]):.3f})",
        )


SYSTEM = (
    "You route a failed agent task to the harness most likely to make the agent succeed on a retry. "
    "Read the failure summary and the candidate harnesses, then reply with one line: 'Answer: NAME', "
    "where NAME is exactly one candidate's name."
)


def judge_prompt(context: RouteContext, candidates: Sequence[CandidateView]) -> str:
    """The user message an LLM judge is shown (the failure summary and the k candidates)."""
    f = context.features
    codes = ", ".join(f"{c} x{n}" for c, n in context.failure_codes.items()) or "none"
    mix = ", ".join(f"{k} {v:.0%}" for k, v in context.cluster_mix.items())
    errors = ", ".join(f"{k} x{n}" for k, n in f.error_types.items()) or "none"
    lines = [
        f"Task ({context.env}, type {context.task_type}): {context.instruction}",
        (
            f"Under the base harness all {context.group_size} attempt(s) failed."
            if context.group_size
            else "The task has not been attempted yet; pick the harness to run it under."
        ),
        f"Failure codes: {codes}. Failure clusters: {mix}.",
        f"Error flags: {errors}. Mean steps {f.mean_steps:.1f}; repeated actions {f.repeated_actions}; "
        f"last action kind: {f.action_kind or 'none'}.",
        "",
        "Candidates:",
    ]
    for i, cand in enumerate(candidates, 1):
        s = cand.sibling
        lines.append(f"{i}. {s.name} (direction {s.direction}): {s.description or '(no description)'}")
        lines.append(f"   changes: {'; '.join(s.changes())}")
        lines.append(f"   profile: {cand.row()}")
    lines.append("")
    lines.append("Which candidate should be tried? Reply 'Answer: NAME'.")
    return "\n".join(lines)


_ANSWER = re.compile(r"answer\s*[:=-]\s*(.+)", re.IGNORECASE)


def parse_choice(text: str, candidates: Sequence[CandidateView]) -> tuple[str | None, str]:
    """The candidate id a reply names, and why (None: abstain)."""
    if not text.strip():
        return None, "empty reply"
    match = _ANSWER.search(text)
    scope = match.group(1).splitlines()[0] if match else text
    named = _mentioned(scope, candidates)
    if match and not named:
        named = _mentioned(text, candidates)
    if len(named) == 1:
        return named[0], "named " + next(c.sibling.name for c in candidates if c.id == named[0])
    if not named:
        return None, "the reply names no candidate"
    return None, "the reply names several candidates"


def _mentioned(text: str, candidates: Sequence[CandidateView]) -> list[str]:
    low = text.lower()
    found = []
    for i, cand in enumerate(candidates, 1):
        tokens = [cand.sibling.name.lower(), cand.id[:8].lower()]
        hit = any(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", low) for t in tokens)
        hit = hit or re.fullmatch(rf"\s*\(?{i}[.)]?\s*", text) is not None
        if hit:
            found.append(cand.id)
    return found


class LLMJudge:
    """A judge served by any model backend (see the module docstring). ``seed`` makes requests repeatable;
    ``backend_options`` go to :func:`~reharness.runtime.agent_specs.make_agent` (e.g. ``max_retries``)."""

    def __init__(
        self,
        spec: str | Agent,
        *,
        name: str | None = None,
        seed: int = 0,
        max_tokens: int = 48,
        temperature: float = 0.0,
        **backend_options: Any,
    ) -> None:
        self.spec = spec if isinstance(spec, str) else getattr(spec, "policy_id", "agent")
        self.name = name or f"llm:{self.spec.removeprefix('llm:')}"
        self.seed, self.max_tokens, self.temperature = seed, max_tokens, temperature
        self._agent: Agent | None = None if isinstance(spec, str) else spec
        self._options = backend_options
        self.calls = self.tokens = 0

    def _backend(self) -> Agent:
        if self._agent is None:
            from reharness.runtime.agent_specs import make_agent

            self._agent = make_agent(self.spec.removeprefix("llm:"), **self._options)
        return self._agent

    async def vote(self, context: RouteContext, candidates: Sequence[CandidateView]) -> JudgeVote:
        prompt = judge_prompt(context, candidates)
        request = ChatRequest(
            messages=(Message(role="system", content=SYSTEM), Message(role="user", content=prompt)),
            sampling=SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens),
            seed=derive_seed(self.seed, context.task_identity, self.name),
        )
        try:
            response = await self._backend().complete(request)
        except Exception as exc:  # a judge never crashes the router: it abstains
            self.calls += 1
            return JudgeVote(
                judge=self.name,
                calls=1,
                error=f"{type(exc).__name__}: {exc}"[:300],
                reason="the model call raised; abstain",
            )
        used = _tokens(
            response.prompt_token_ids, response.completion_token_ids, SYSTEM + prompt, response.text
        )
        self.calls += 1
        self.tokens += used
        if response.error:
            return JudgeVote(
                judge=self.name,
                calls=1,
                tokens=used,
                error=response.error[:300],
                reason="server error; abstain",
            )
        choice, why = parse_choice(response.text, candidates)
        ranking = [choice] if choice else []
        return JudgeVote(
            judge=self.name,
            ranking=ranking,
            reason=f"{why}: {response.text.strip()[:120]!r}",
            calls=1,
            tokens=used,
        )

    async def close(self) -> None:
        if self._agent is not None:
            await self._agent.close()


def _tokens(prompt_ids: Any, completion_ids: Any, prompt: str, reply: str) -> int:
    """Tokens a call spent: the server's token ids where given, else characters / 4."""
    prompt_n = len(prompt_ids) if prompt_ids is not None else (len(prompt) + 3) // 4
    reply_n = len(completion_ids) if completion_ids is not None else (len(reply) + 3) // 4
    return prompt_n + reply_n


RULE_JUDGES: dict[str, type[DirectionJudge] | type[BehaviourJudge]] = {
    "direction": DirectionJudge,
    "behaviour": BehaviourJudge,
}


def make_judge(spec: str, *, seed: int = 0, **backend_options: Any) -> Judge:
    """A judge from a spec: a rule judge's name (``direction``, ``behaviour``) or a model spec for an LLM
    judge (``llm:openai:MODEL@URL``, ``openai:MODEL@URL``, ``tiny:NAME``)."""
    if spec in RULE_JUDGES:
        return RULE_JUDGES[spec]()
    if ":" in spec:
        return LLMJudge(spec, seed=seed, **backend_options)
    from reharness.core.errors import UnknownNameError, did_you_mean

    raise UnknownNameError(
        f"unknown judge {spec!r}",
        hint=did_you_mean(spec, list(RULE_JUDGES)) + "; LLM judges: llm:openai:MODEL@URL",
    )


def rule_judges(strategy: str) -> list[Judge]:
    """The rule judges of the ``vote`` strategy (none for the other strategies)."""
    return [DirectionJudge(), BehaviourJudge()] if strategy == "vote" else []
