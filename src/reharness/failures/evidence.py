"""Reading a recorded trajectory: per-step facts shared by the detectors and the runtime signals.

Everything here looks only at an :class:`~reharness.store.records.EpisodeRecord` (actions, observations,
flags, outcome), never at the environment's hidden state, so the same facts can be recomputed from any stored
run. Environment-specific readings are keyed by the record's ``env`` name (``household``, ``shop``, ``db``);
other environments get the generic facts only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reharness.store.records import EpisodeRecord, StepRecord

#: A shop product id (lowercase ASIN: ``b0`` + 8 characters), as shown on result pages and clicked.
PRODUCT_ID = re.compile(r"(?<![A-Za-z0-9])b0[a-z0-9]{8}(?![A-Za-z0-9])", re.IGNORECASE)
#: household's answer to an inadmissible command.
NOTHING_HAPPENS = "Nothing happens."
#: Option requirements in a shop instruction: "... with color: black, and size: large, and price lower ...".
_REQUIRED_OPTION = re.compile(r"(?:\bwith |, and )([a-z]+): ([^,]+?)(?=, and |$)")
_RECEIPT_OPTION = re.compile(r"^([a-z]+): (.+)$")
_SHOP_SEP = " [SEP] "
_SHOP_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)
_DB_WRITE = re.compile(r"^\s*(insert|update|delete|replace)\b", re.IGNORECASE)
#: Prefix of the runtime's parse error for a tool call it could not translate (unknown tool, bad arguments).
BAD_TOOL_CALL = "bad tool call"


def normalise(text: str) -> str:
    """Whitespace-collapsed text: the unit of "same observation" and "same action"."""
    return " ".join(text.split())


def executed(step: StepRecord) -> bool:
    """Whether the step's action reached the environment and returned (not blocked, unparsed or crashed)."""
    return step.action is not None and "env_error" not in step.flags


# ---------------------------------------------------------------------------------------------- db
@dataclass(frozen=True)
class DbAction:
    """A db action as the env read it: ``kind`` is ``sql``, ``answer`` or ``invalid``."""

    kind: str
    sql: str = ""
    answer: str = ""


def db_action(action: str) -> DbAction:
    """Parse a db action with the environment's own v0.2 parser (so the reading matches the env's)."""
    from reharness.envs.db.protocol import parse_action

    parsed = parse_action(action)
    return DbAction(parsed.kind, parsed.sql, parsed.answer_raw.strip())


def is_sql_result(observation: str) -> bool:
    """A successful statement shows its rows as a Python list (``[]``, ``[('a', 1)]``); errors show text."""
    return observation.lstrip().startswith("[")


def is_empty_result(observation: str) -> bool:
    return observation.strip() == "[]"


def is_db_write(sql: str) -> bool:
    return bool(_DB_WRITE.match(sql))


# ---------------------------------------------------------------------------------------------- shop
def shop_action(action: str) -> tuple[str, str] | None:
    """``("search"|"click", argument)`` of a shop action, or ``None`` when it is malformed."""
    match = _SHOP_ACTION.match(action)
    return None if match is None else (match.group(1).lower(), match.group(2).strip())


def is_purchase(step: StepRecord) -> bool:
    """A shop step whose action is ``click[buy now]`` (it buys when the step also ended the episode)."""
    parsed = shop_action(step.action or "")
    return parsed is not None and parsed[0] == "click" and parsed[1].lower() == "buy now"


def required_options(instruction: str) -> dict[str, str]:
    """Option values a shop instruction requires (``{"color": "black"}``), as stated in its text."""
    return {group: value.strip() for group, value in _REQUIRED_OPTION.findall(instruction)}


def receipt_options(observation: str) -> dict[str, str]:
    """Option values listed on the shop's purchase receipt (the page shown after ``buy now``)."""
    found: dict[str, str] = {}
    for part in observation.split(_SHOP_SEP):
        match = _RECEIPT_OPTION.match(part.strip())
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


# ---------------------------------------------------------------------------------------------- code
def code_command(action: str) -> str:
    """The command name of a code action (``str_replace``, ``submit``, …; empty when unreadable)."""
    from reharness.envs.code.protocol import parse

    return parse(action).name


def code_edit(step: StepRecord) -> bool:
    return code_command(step.action or "") in ("str_replace", "insert")


def code_premature(steps: list[StepRecord]) -> str | None:
    """Why a code ``submit`` came too early: no successful edit, or no test run after the last one."""
    done = [s for s in steps[:-1] if executed(s)]
    edits = [i for i, s in enumerate(done) if code_edit(s) and not s.observation.startswith("Error:")]
    if not edits:
        return "submitted without any successful edit"
    if not any(code_command(s.action or "") == "run_tests" for s in done[edits[-1] + 1 :]):
        return "submitted without running the tests after the last edit"
    return None


# ---------------------------------------------------------------------------------------------- generic
def action_key(env: str, action: str) -> str:
    """What makes two actions "the same": db compares the statement (or answer), others the command text."""
    if env == "db":
        parsed = db_action(action)
        if parsed.kind == "sql":
            return "sql:" + normalise(parsed.sql).rstrip(";").strip().lower()
        if parsed.kind == "answer":
            return "answer:" + normalise(parsed.answer)
    return normalise(action).lower()


def stale_steps(record: EpisodeRecord) -> list[bool]:
    """Per step: whether its observation (or the harness message shown instead) was already seen in this
    episode, counting the initial observation."""
    seen = {normalise(record.initial_observation)}
    stale: list[bool] = []
    for step in record.steps:
        text = normalise(step.observation)
        stale.append(text in seen)
        seen.add(text)
    return stale


def runs(flags: list[bool]) -> list[tuple[int, int]]:
    """Maximal runs of ``True`` as ``(start, length)`` pairs."""
    found: list[tuple[int, int]] = []
    start = None
    for i, value in enumerate([*flags, False]):
        if value and start is None:
            start = i
        elif not value and start is not None:
            found.append((start, i - start))
            start = None
    return found
