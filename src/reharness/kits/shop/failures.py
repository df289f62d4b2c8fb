"""shop failure evidence, the premature-purchase detector, runtime signals, masking and leakage facts.

Product ids (lowercase ASINs) are masked in packets as ``<product-N>`` (numbered per trace), and listed as
leakage facts: a patch must not copy them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.failures.evidence import executed, normalise
from reharness.failures.text import MaskRule
from reharness.store.records import EpisodeRecord, StepRecord

#: A product id (lowercase ASIN: ``b0`` + 8 characters), as shown on result pages and clicked.
PRODUCT_ID = re.compile(r"(?<![A-Za-z0-9])b0[a-z0-9]{8}(?![A-Za-z0-9])", re.IGNORECASE)
#: Option requirements in an instruction: "... with color: black, and size: large, and price lower ...".
_REQUIRED_OPTION = re.compile(r"(?:\bwith |, and )([a-z]+): ([^,]+?)(?=, and |$)")
_RECEIPT_OPTION = re.compile(r"^([a-z]+): (.+)$")
_SEP = " [SEP] "
_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)
MASK_RULES = (MaskRule(PRODUCT_ID.pattern, "alias", "product_ids", label="product", flags=re.IGNORECASE),)


def shop_action(action: str) -> tuple[str, str] | None:
    """``("search"|"click", argument)`` of an action, or ``None`` when it is malformed."""
    match = _ACTION.match(action)
    return None if match is None else (match.group(1).lower(), match.group(2).strip())


def is_purchase(step: StepRecord) -> bool:
    """A step whose action is ``click[buy now]`` (it buys when the step also ended the episode)."""
    parsed = shop_action(step.action or "")
    return parsed is not None and parsed[0] == "click" and parsed[1].lower() == "buy now"


def required_options(instruction: str) -> dict[str, str]:
    """Option values an instruction requires (``{"color": "black"}``), as stated in its text."""
    return {group: value.strip() for group, value in _REQUIRED_OPTION.findall(instruction)}


def receipt_options(observation: str) -> dict[str, str]:
    """Option values listed on the purchase receipt (the page shown after ``buy now``)."""
    found: dict[str, str] = {}
    for part in observation.split(_SEP):
        match = _RECEIPT_OPTION.match(part.strip())
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def detect(record: EpisodeRecord) -> Iterator[Finding]:
    """``premature_answer``: bought without selecting an option the instruction requires."""
    last = record.steps[-1] if record.steps else None
    if record.termination != "terminated" or last is None or record.score >= 1.0 or last.action is None:
        return
    if is_purchase(last):
        chosen = receipt_options(last.observation)
        missing = sorted(group for group in required_options(record.instruction) if group not in chosen)
        if missing:
            detail = f"bought without selecting the required {', '.join(missing)}"
            yield Finding(FailureCode.PREMATURE_ANSWER, (last.index,), detail)


def leakage(text: str) -> Iterator[tuple[str, str]]:
    """Product ids in ``text``: facts a patch must not copy."""
    for match in PRODUCT_ID.findall(text):
        yield "product_ids", match.lower()


def signals(record: EpisodeRecord) -> dict[str, int | float]:
    """``searches``, ``clicks``, ``buy_now``, ``repeated_searches`` (same keywords as an earlier search),
    ``repeated_clicks`` (a click equal to the previous action), ``products_viewed`` (distinct product ids
    clicked), ``turns_without_action`` (replies that executed nothing: unparsed, bad tool call, blocked)."""
    searches: list[str] = []
    clicks = buy_now = repeated_searches = repeated_clicks = 0
    products: set[str] = set()
    previous: str | None = None
    for step in record.steps:
        if not executed(step):
            continue
        parsed = shop_action(step.action or "")
        key = None if parsed is None else f"{parsed[0]}[{normalise(parsed[1]).lower()}]"
        if parsed is not None and parsed[0] == "search":
            words = " ".join(sorted(normalise(parsed[1]).lower().split()))
            repeated_searches += words in searches
            searches.append(words)
        elif parsed is not None:
            clicks += 1
            repeated_clicks += key == previous
            buy_now += parsed[1].lower() == "buy now"
            if PRODUCT_ID.fullmatch(parsed[1]):
                products.add(parsed[1].lower())
        previous = key
    return {
        "searches": len(searches),
        "clicks": clicks,
        "buy_now": buy_now,
        "repeated_searches": repeated_searches,
        "repeated_clicks": repeated_clicks,
        "products_viewed": len(products),
        "turns_without_action": sum(not executed(s) for s in record.steps),
    }
