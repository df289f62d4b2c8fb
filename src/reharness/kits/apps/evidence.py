"""Evidence of ``apps`` failures read from observations: API, auth and code errors, collateral damage.

The env's observations are stable text: an API error surfaces as the agent code's traceback ending in
``ApiError: Response status code is <status>:``; any other exception ends in ``<Name>: message``; a time-out
says ``TimeoutError: execution exceeded``; the final observation carries the evaluation report with one
``FAILED <test>: ...`` line per failed test (:mod:`reharness.kits.apps.grading`).
"""

from __future__ import annotations

import re

_STATUS = re.compile(r"Response status code is (\d{3})")
_EXCEPTION = re.compile(r"(?m)^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception))\b")
COLLATERAL_TEST = "FAILED no_collateral_damage"
ANSWER_TEST = "FAILED answer"


def api_statuses(observation: str) -> list[int]:
    """HTTP-like statuses of the API errors an observation shows."""
    return [int(s) for s in _STATUS.findall(observation)]


def is_auth_error(observation: str) -> bool:
    return 401 in api_statuses(observation)


def is_api_misuse(observation: str) -> bool:
    """An API call was wrong in itself: unknown app/API/resource (404), bad arguments (422), conflict (409),
    too many calls (429)."""
    return any(s in (404, 409, 422, 429) for s in api_statuses(observation))


def code_error(observation: str) -> str | None:
    """The name of an exception the agent's code raised that is not an API error (``None``: none)."""
    for name in _EXCEPTION.findall(observation):
        if name != "ApiError":
            return name
    return None


def collateral_damage(observation: str) -> bool:
    return COLLATERAL_TEST in observation
