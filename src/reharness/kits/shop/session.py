"""One shopping episode as a state machine: parse an action, move between pages, grade the purchase.

Actions are WebShop's ``search[keywords]`` (only on the search page) and ``click[value]`` (value one of the
current page's clickables, matched case-insensitively). Anything else is invalid: the page stays as it was,
as in WebShop, and the step is flagged invalid. The session also keeps the observable counters hooks read
(searches, visited products, repeated searches and clicks, turns spent on one product).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reharness.kits.shop.catalogue import Catalogue
from reharness.kits.shop.pages import (
    BACK_TO_SEARCH,
    BUY_NOW,
    DONE,
    ITEM,
    ITEM_SUB,
    NEXT,
    PREV,
    RESULTS,
    SEARCH,
    SUB_PAGES,
    BrowserState,
    clickables,
    render,
    render_done,
)
from reharness.kits.shop.reward import Goal, RewardBreakdown, purchase_reward
from reharness.kits.shop.search import search_products, tokenize

_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)


def parse_action(action: str) -> tuple[str, str] | None:
    """``("search"|"click", argument)`` or ``None`` when ``action`` is not of the form ``verb[arg]``."""
    match = _ACTION.match(action)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2).strip()


@dataclass
class StepResult:
    observation: str
    invalid: bool = False
    done: bool = False
    outcome: RewardBreakdown | None = None
    message: str = ""


class ShopSession:
    """Browser state plus episode bookkeeping for one task."""

    def __init__(self, catalogue: Catalogue, instruction: str, goal: Goal) -> None:
        self.catalogue = catalogue
        self.instruction = instruction
        self.goal = goal
        self.state = BrowserState()
        self.search_queries: list[str] = []
        self.visited_items: list[str] = []
        self.duplicate_search_count = 0
        self.same_click_count = 0
        self.product_stall_turns = 0
        self.purchased: str | None = None
        self._last_action: str | None = None

    # ------------------------------------------------------------------ queries
    def clickables(self) -> list[str]:
        return clickables(self.state, self.catalogue)

    def has_search_bar(self) -> bool:
        return self.state.page == SEARCH

    def observation(self) -> str:
        return render(self.state, self.catalogue, self.instruction)

    # ------------------------------------------------------------------ dynamics
    def step(self, action: str) -> StepResult:
        parsed = parse_action(action)
        self._count_repeats(parsed)
        result = self._apply(parsed)
        on_product = self.state.page in (ITEM, ITEM_SUB)
        self.product_stall_turns = self.product_stall_turns + 1 if on_product else 0
        return result

    def _count_repeats(self, parsed: tuple[str, str] | None) -> None:
        key = None if parsed is None else f"{parsed[0]}[{parsed[1].lower()}]"
        if parsed is not None and parsed[0] == "click" and key == self._last_action:
            self.same_click_count += 1
        else:
            self.same_click_count = 0
        self._last_action = key

    def _invalid(self, message: str) -> StepResult:
        return StepResult(self.observation(), invalid=True, message=message)

    def _apply(self, parsed: tuple[str, str] | None) -> StepResult:
        if parsed is None:
            return self._invalid("actions look like search[keywords] or click[value]")
        verb, argument = parsed
        if verb == "search":
            return self._search(argument)
        value = argument.lower()
        if value not in self.clickables():
            return self._invalid(f"{argument!r} is not clickable on this page")
        return self._click(value)

    def _search(self, keywords: str) -> StepResult:
        if not self.has_search_bar():
            return self._invalid("search is only available on the search page (click 'back to search')")
        if not keywords:
            return self._invalid("search[...] needs keywords")
        tokens = tokenize(keywords)
        if any(tokenize(q) == tokens for q in self.search_queries):
            self.duplicate_search_count += 1
        self.search_queries.append(keywords)
        self.state = BrowserState(page=RESULTS, query=keywords, hits=search_products(keywords))
        return StepResult(self.observation())

    def _click(self, value: str) -> StepResult:
        state = self.state
        if value == BACK_TO_SEARCH:
            self.state = BrowserState()
        elif state.page == RESULTS:
            if value == NEXT:
                state.page_num += 1
            elif value == PREV:
                state.page_num -= 1
            else:
                self._open_item(value)
        elif state.page == ITEM:
            if value == PREV:
                state.page, state.asin, state.selected = RESULTS, None, {}
            elif value in SUB_PAGES:
                state.page, state.sub = ITEM_SUB, value
            elif value == BUY_NOW:
                return self._buy()
            else:
                assert state.asin is not None
                group = self.catalogue.get(state.asin).option_group_of(value)
                assert group is not None
                state.selected[group] = value
        elif state.page == ITEM_SUB and value == PREV:
            state.page, state.sub = ITEM, None
        return StepResult(self.observation())

    def _open_item(self, asin: str) -> None:
        self.state.page, self.state.asin, self.state.selected, self.state.sub = ITEM, asin, {}, None
        if asin not in self.visited_items:
            self.visited_items.append(asin)
        self.product_stall_turns = 0

    def _buy(self) -> StepResult:
        assert self.state.asin is not None
        product = self.catalogue.get(self.state.asin)
        outcome = purchase_reward(product, self.state.selected, self.goal)
        self.purchased = product.asin
        observation = render_done(product, self.state.selected, outcome.reward)
        self.state.page = DONE
        return StepResult(observation, done=True, outcome=outcome)
