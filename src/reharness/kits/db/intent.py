"""Where an SQL statement contradicts the wording of its DBBench question: MIN for "highest", ASC for
"highest", SUM for "average", or the filter column returned instead of the asked one.

One rule table serves two readers: the ``sql_guard`` repair operator embeds :data:`WORDS`,
:data:`RULES` and :data:`FILTER_COLUMN` as literals in its hook code (hooks run in the sandbox and cannot
import this module), and tiny-agent demonstrations name the same defects in their harness notes
(:func:`intent_problem`). Keeping the table here keeps the two in step.
"""

from __future__ import annotations

import re

#: Question words per intent (regular expressions over the lower-cased question).
WORDS: dict[str, str] = {
    "high": r"\b(highest|largest|maximum|biggest|greatest|most)\b",
    "low": r"\b(lowest|smallest|minimum|least|fewest)\b",
    "mean": r"\b(average|mean)\b",
    "total": r"\b(total|sum)\b",
}
#: (intent the question states, intent it must not also state, marker in the lower-cased statement, problem).
RULES: tuple[tuple[str, str, str, str], ...] = (
    ("high", "low", "min(", "the question asks for the highest value, but the query takes MIN"),
    ("low", "high", "max(", "the question asks for the lowest value, but the query takes MAX"),
    ("high", "low", " asc", "the question asks for the highest, but the query sorts ascending (ASC)"),
    ("low", "high", " desc", "the question asks for the lowest, but the query sorts descending (DESC)"),
    ("mean", "total", "sum(", "the question asks for an average, but the query takes SUM"),
    ("total", "mean", "avg(", "the question asks for a total, but the query takes AVG"),
)
#: A SELECT that returns the column it filters on (case-insensitive, on whitespace-normalised SQL).
FILTER_COLUMN = r"^select `([^`]+)` from `[^`]+` where `([^`]+)` = "
FILTER_PROBLEM = "the query returns `{name}`, the column it filters on, not the one the question asks for"


def intent_problem(sql: str, question: str) -> str | None:
    """The first :data:`RULES` problem of ``sql`` for ``question``, or the filter-column one (None: none)."""
    flat = " ".join(sql.split())
    low, asked = flat.lower(), question.lower()
    said = {name: re.search(pattern, asked) is not None for name, pattern in WORDS.items()}
    for wanted, other, marker, problem in RULES:
        if said[wanted] and not said[other] and marker in low:
            return problem
    found = re.search(FILTER_COLUMN, flat, re.IGNORECASE)
    if found and found.group(1).lower() == found.group(2).lower():
        return FILTER_PROBLEM.format(name=found.group(1))
    return None
