"""Harness interventions in demonstrations: hints, blocks and reminders that a tiny agent learns to heed.

A target agent is only a useful target for harness engineering if a harness can steer it: an LLM reads a
``[Harness] …`` note or a blocked-action message and acts on it. A tiny model trained on base-harness demos
alone never saw either and ignores them (measured on db: repair-operator patches fired on 9–40 steps of a
20-task batch and changed nothing, Δ_B = 0). So demonstrations also contain the interventions a harness
makes, rendered exactly as the runtime renders effects — a hint or message is ``\\n\\n[Harness] text``
appended to the user turn; a block replaces the environment's feedback with the block text and no admissible
list — and each is followed by the expert's supervised action:

- after a perturbed (off-expert) turn, a hint naming candidate next actions (the expert's among them), or,
  when the perturbed action was invalid and so changed nothing, a block in place of the environment's reply;
- a premature terminal action (buy, answer) inserted before an expert turn, blocked by the harness;
- a goal reminder before an expert turn: neutral information that must not derail the agent.

Texts come from several phrasings, not the repair operators' exact strings, so the model learns to use what a
note says rather than one template. With ``observed`` the notes never name the expert's action: they say
only what a hook could compute at that moment (the kit's :class:`~reharness.models.tiny.spec.ObservedNotes`),
and appear only where a hook could fire (after a failed or visibly wrong statement; an answer before any
query succeeded).
Everything is a pure function of the demonstration and the random generator it is given.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from reharness.core.types import Message
from reharness.models.tiny.spec import ObservedNotes
from reharness.runtime.harness import HarnessConfig

_SQL = re.compile(r"```sql\s*(.*?)\s*```", re.DOTALL)
_IDENT = re.compile(r"`([^`]+)`")
_BLOCK_LEADS = (
    "That action is not valid here. Instead: ",
    "Blocked: that would fail. Do this: ",
    "Not valid. Try: ",
)


@dataclass(frozen=True)
class InterventionRates:
    """How often each intervention appears in the demonstrations."""

    after_perturbed: float = 0.6  # share of perturbed turns followed by a hint or a block
    block_share: float = 0.5  # of those after an invalid action: a block rather than a hint
    premature: float = 0.05  # per expert turn: a blocked premature terminal action is inserted before it
    reminder: float = 0.03  # per expert turn: a goal reminder precedes it
    #: notes say only what a harness can observe, never the expert's action (the kit's observed notes)
    observed: bool = False
    premature_after_error: float = 0.5  # observed: after a failed perturbed statement, an answer is blocked


@dataclass(frozen=True)
class TurnFacts:
    """What the solver knew at one decision (recorded while rendering the demo)."""

    expert: str  # the expert's action in this state
    perturbed: bool  # the reply was a perturbation (unsupervised), not the expert's action
    choices: tuple[str, ...] = ()  # other valid actions or names here (distractors for hints)
    premature: str | None = None  # a rendered premature terminal reply possible here, if any
    invalid: bool = False  # filled from the episode record: the env rejected the action
    error: str = "none"  # db: the error kind this turn's statement caused (filled in at the next turn)
    queried: bool = False  # db: some statement had succeeded before this decision


def compact(action: str) -> str:
    """The part of an action a note would quote: the SQL of an operation, else the action itself."""
    match = _SQL.search(action)
    return match.group(1) if match else action.strip()


def _with_distractors(needed: list[str], others: tuple[str, ...], rng: random.Random) -> list[str]:
    """``needed`` plus up to two of ``others``, shuffled (the right answer is not always first)."""
    pool = [c for c in dict.fromkeys(others) if c not in needed]
    picked = [*rng.sample(pool, min(len(pool), rng.randint(0, 2))), *needed]
    rng.shuffle(picked)
    return picked


def hint_text(nxt: TurnFacts, rng: random.Random) -> str:
    """A hint after an off-path action that names the expert's next action (maybe among candidates)."""
    target = compact(nxt.expert)
    if "\n" in nxt.expert and _IDENT.search(target) and rng.random() < 0.5:
        names = _with_distractors(list(dict.fromkeys(_IDENT.findall(target))), nxt.choices, rng)
        return "That did not get closer to the answer. Known columns: " + ", ".join(f"`{n}`" for n in names)
    if "\n" not in nxt.expert and nxt.choices and rng.random() < 0.6:
        lead = rng.choice(
            (
                "That action is not useful here. The closest valid actions are: ",
                "Copy one action exactly from the admissible list, e.g.: ",
                "That did not help. Try one of: ",
            )
        )
        return lead + "; ".join(_with_distractors([nxt.expert], nxt.choices, rng)) + "."
    lead = rng.choice(("Try: ", "A better next action: ", "Next, do this: "))
    return lead + target


def block_text(nxt: TurnFacts, rng: random.Random) -> str:
    """A block message for an invalid action, naming what to do instead."""
    lead = rng.choice(_BLOCK_LEADS)
    return lead + compact(nxt.expert)


def premature_text(nxt: TurnFacts, rng: random.Random) -> str:
    """The block message for a premature terminal action."""
    lead = rng.choice(("Not yet: the task is not done. First: ", "Do not finish yet. Next: "))
    return lead + compact(nxt.expert)


def reminder_text(instruction: str, rng: random.Random) -> str:
    tail = rng.choice((" Check that your next action brings you closer to it.", ""))
    return f"Remember the task: {instruction.strip()}{tail}"


def _feedback(config: HarnessConfig, text: str) -> str:
    return config.feedback_template.format(observation=text)


def _visible_problems(
    messages: tuple[Message, ...], facts: list[TurnFacts], instruction: str, notes: ObservedNotes
) -> list[str | None]:
    """Per assistant turn: the defect a hook could see in a perturbed statement (None: none, or expert)."""
    replies = [m.content for m in messages if m.role == "assistant"]
    return [
        notes.problem(reply, list(fact.choices), instruction) if fact.perturbed else None
        for reply, fact in zip(replies, facts, strict=True)
    ]


def _flagged(fact: TurnFacts, problem: str | None) -> bool:
    """A perturbed turn a hook could tell apart: the env rejected it, it failed, or its defect is visible."""
    return fact.perturbed and (fact.invalid or fact.error != "none" or problem is not None)


def _observed_feedback(
    message: Message,
    fact: TurnFacts,
    problem: str | None,
    config: HarnessConfig,
    rng: random.Random,
    block: bool,
    notes: ObservedNotes,
) -> Message:
    columns = list(fact.choices)
    if block:
        text = _feedback(config, notes.block(problem, fact.error, columns, rng))
    else:
        text = f"{message.content}\n\n[Harness] {notes.hint(problem, fact.error, columns, rng)}"
    return message.model_copy(update={"content": text})


def add_interventions(
    messages: tuple[Message, ...],
    supervised: tuple[bool, ...],
    facts: list[TurnFacts],
    config: HarnessConfig,
    instruction: str,
    rng: random.Random,
    rates: InterventionRates,
    notes: ObservedNotes | None = None,
) -> tuple[tuple[Message, ...], tuple[bool, ...]]:
    """The conversation with interventions added, and the supervision flag of every assistant turn
    (``notes``: the kit's observed notes, needed when ``rates.observed``)."""
    if len(facts) != len(supervised):
        raise ValueError(f"{len(facts)} turn facts for {len(supervised)} assistant turns")
    if rates.observed and notes is None:
        raise ValueError("observed interventions need the kit's observed notes (EnvKit.tiny.notes)")
    problems = (
        _visible_problems(messages, facts, instruction, notes)
        if notes is not None and rates.observed
        else [None] * len(facts)
    )
    flagged = [_flagged(fact, problem) for fact, problem in zip(facts, problems, strict=True)]
    out: list[Message] = []
    flags: list[bool] = []
    turn = 0
    for message in messages:
        if message.role == "assistant":
            fact = facts[turn]
            if supervised[turn] and out and out[-1].role == "user" and rates.observed:
                after_error = turn > 0 and flagged[turn - 1]
                # only where a hook could tell the answer is premature: nothing succeeded, or a flagged turn
                chance = (
                    rates.premature_after_error if after_error else (0.0 if fact.queried else rates.premature)
                )
                if fact.premature and rng.random() < chance and notes is not None:
                    block = notes.premature(after_error, rng)
                    out.append(Message(role="assistant", content=fact.premature))
                    out.append(Message(role="user", content=_feedback(config, block)))
                    flags.append(False)
            elif supervised[turn] and out and out[-1].role == "user":
                if fact.premature and rng.random() < rates.premature:
                    out.append(Message(role="assistant", content=fact.premature))
                    out.append(Message(role="user", content=_feedback(config, premature_text(fact, rng))))
                    flags.append(False)
                elif rng.random() < rates.reminder:
                    note = reminder_text(instruction, rng)
                    out[-1] = out[-1].model_copy(update={"content": f"{out[-1].content}\n\n[Harness] {note}"})
            out.append(message)
            flags.append(supervised[turn])
            turn += 1
            continue
        prev = turn - 1
        nxt = facts[turn] if turn < len(facts) else None
        if (
            message.role == "user"
            and prev >= 0
            and facts[prev].perturbed
            and nxt is not None
            and supervised[turn]
            and rng.random() < rates.after_perturbed
        ):
            if rates.observed and notes is not None:
                if flagged[prev]:
                    as_block = rng.random() < rates.block_share
                    message = _observed_feedback(
                        message, facts[prev], problems[prev], config, rng, as_block, notes
                    )
            elif facts[prev].invalid and rng.random() < rates.block_share:
                message = message.model_copy(update={"content": _feedback(config, block_text(nxt, rng))})
            else:
                note = hint_text(nxt, rng)
                message = message.model_copy(update={"content": f"{message.content}\n\n[Harness] {note}"})
        out.append(message)
    return tuple(out), tuple(flags)
