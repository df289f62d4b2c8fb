"""Shop operators: premature-purchase guard, repeated-search guard, stall breaker.

They read the WebShop-like ``ctx``: ``state`` (page type, clickables, prices, stall and repeat counters),
``selected_options``, ``search_queries`` and the task's stated requirements (``task.required_options``,
``task.required_attributes``, ``task.price_max``, ``task.product``) — never product ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

_TEXT = """    action = ctx.get("action") or {}
    text = " ".join(str(action.get("text") or "").lower().split())
"""

GUARD = """
def purchase_guard(ctx, nb):
<<TEXT>>    if text != "click[buy now]":
        return None
    state = ctx.get("state") or {}
    task = ctx.get("task") or {}
    selected = ctx.get("selected_options") or {}
    clickables = [str(c).lower() for c in (state.get("clickables") or [])]
    required = task.get("required_options") or {}
    missing = []
    absent = []
    for group in sorted(required):
        value = str(required[group]).lower()
        if str(selected.get(group) or "").lower() == value:
            continue
        if value in clickables:
            missing.append("click[" + value + "] for " + str(group))
        else:
            absent.append(str(group) + " " + value)
    problems = []
    if missing:
        problems.append("select the required options first: " + ", ".join(missing))
<<ABSENT>><<PRICE>>    if not problems:
        return None
    blocks = nb.get("buy_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["buy_blocks"] = blocks + 1
    return {"type": "block_and_prompt", "message": ("Do not buy yet: " + "; ".join(problems) + ".")[:900]}
"""
GUARD_ABSENT = """    if absent:
        problems.append("this product does not offer " + ", ".join(absent) + "; go back and find another")
"""
GUARD_PRICE = """    price = state.get("current_price")
    limit = task.get("price_max") or state.get("price_max")
    if price is not None and limit is not None and float(price) > float(limit):
        problems.append("its price " + str(price) + " is above the budget of " + str(limit))
"""


class PurchaseGuard(Operator):
    name = "purchase_guard"
    summary = "Block 'buy now' while a required option is unselected (or the price is over budget)"
    codes = ("premature_answer", "wrong_answer")
    envs = ("shop",)
    signals = ("buy_now",)
    priority = 10
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"max_blocks": (1, 5)}

    def space(self, env: str) -> ParamSpace:
        return {"check_price": (True, False), "block_absent": (False, True), "max_blocks": (2, 1, 3)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        parts = {
            "TEXT": _TEXT,
            "ABSENT": GUARD_ABSENT if params["block_absent"] else "",
            "PRICE": GUARD_PRICE if params["check_price"] else "",
        }
        code = fill(GUARD, parts, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("purchase_guard", code)}


DEDUPE = """
def search_dedupe(ctx, nb):
<<TEXT>>    if not text.startswith("search[") or not text.endswith("]"):
        return None
    words = sorted(set(text[7:-1].split()))
    earlier = [sorted(set(str(q).lower().split())) for q in (ctx.get("search_queries") or [])]
    if words not in earlier:
        return None
    blocks = nb.get("search_blocks", 0)
    if blocks >= <<max_blocks>>:
        return None
    nb["search_blocks"] = blocks + 1
    message = "You already searched for exactly these keywords; the results will be the same."
<<SUGGEST>>    return {"type": "block_and_prompt", "message": message[:900]}
"""
DEDUPE_SUGGEST = """    task = ctx.get("task") or {}
    attributes = [str(a) for a in (task.get("required_attributes") or [])]
    product = str(task.get("product") or "").strip()
    if product:
        message += " Try other keywords, e.g. the product type with one required attribute: search["
        message += " ".join([product] + attributes[-1:]) + "]."
"""


class SearchDedupe(Operator):
    name = "search_dedupe"
    summary = "Block a search that repeats earlier keywords and suggest different ones"
    codes = ("repeated_action", "no_progress", "step_limit")
    envs = ("shop",)
    signals = ("repeated_searches",)
    priority = 25
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"max_blocks": (1, 5)}

    def space(self, env: str) -> ParamSpace:
        return {"suggest": (True, False), "max_blocks": (2, 1, 3)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        parts = {"TEXT": _TEXT, "SUGGEST": DEDUPE_SUGGEST if params["suggest"] else ""}
        code = fill(DEDUPE, parts, max_blocks=params["max_blocks"])
        return {"before_action": Fragment("search_dedupe", code)}


STALL = """
def stall_breaker(ctx, nb):
    state = ctx.get("state") or {}
    notes = []
    if (state.get("product_stall_turns") or 0) >= <<stall>>:
        notes.append(
            "You have spent several steps on this product. If it matches the task, select the required "
            "options and click 'buy now'; otherwise click 'back to search' and try another product."
        )
    if (state.get("same_click_count") or 0) >= <<clicks>>:
        notes.append("Clicking the same thing again will not change the page.")
    duplicates = state.get("duplicate_search_count") or 0
    if duplicates > nb.get("duplicates_seen", 0):
        nb["duplicates_seen"] = duplicates
        notes.append("That search repeated an earlier one; vary the keywords.")
    remaining = ctx.get("remaining_steps")
    if remaining is not None and remaining <= <<late>> and state.get("buy_now_available"):
        notes.append("Few steps remain: if this product fits, buy it now rather than running out of steps.")
    if not notes:
        return None
    return {"type": "inject_hint", "message": " ".join(notes)[:900]}
"""


class StallBreaker(Operator):
    name = "stall_breaker"
    summary = "Hint when the agent stalls on one product, repeats clicks or searches, or runs out of steps"
    codes = ("no_progress", "step_limit", "repeated_action")
    envs = ("shop",)
    signals = ("repeated_clicks", "repeated_searches", "step_limit_hit")
    priority = 60
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"stall": (2, 10), "clicks": (1, 4), "late": (1, 8)}

    def space(self, env: str) -> ParamSpace:
        return {"stall": (4, 3, 6), "clicks": (1, 2), "late": (3, 5)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(STALL, stall=params["stall"], clicks=params["clicks"], late=params["late"])
        return {"after_feedback": Fragment("stall_breaker", code)}
