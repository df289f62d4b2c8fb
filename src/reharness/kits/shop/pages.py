"""The shop's pages: browser state, what each page shows and which strings on it are clickable.

The page graph is WebShop's: search page (the only page with a search bar) -> results (10 per page, at most 50
hits) -> item page (title, price, rating, option groups, sub-page links, ``buy now``) -> sub-pages
(description, features, reviews, attributes) whose ``< prev`` returns to the item. The text observation is
WebShop's "text" mode: the visible strings of the page joined by ``" [SEP] "``. As in WebShop's rich text
mode, an item page starts with "You have clicked <value>." for every option value selected on it, so the
selection is observable. Clickables are lowercase (WebShop lowercases them); product ids are shown as they
are clicked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reharness.kits.shop.catalogue import Catalogue, Product
from reharness.kits.shop.search import RESULTS_PER_PAGE

SEP = " [SEP] "
SEARCH, RESULTS, ITEM, ITEM_SUB, DONE = "search", "results", "item", "item_sub", "done"
BACK_TO_SEARCH, PREV, NEXT, BUY_NOW = "back to search", "< prev", "next >", "buy now"
SUB_PAGES = ("description", "features", "reviews", "attributes")
_LABELS = {BACK_TO_SEARCH: "Back to Search", PREV: "< Prev", NEXT: "Next >", BUY_NOW: "Buy Now"}


@dataclass
class BrowserState:
    """Where the agent is: the page, the last search and its hits, the product and its selected options."""

    page: str = SEARCH
    query: str = ""
    hits: tuple[str, ...] = ()
    page_num: int = 1
    asin: str | None = None
    sub: str | None = None
    selected: dict[str, str] = field(default_factory=dict)

    def page_hits(self) -> tuple[str, ...]:
        start = (self.page_num - 1) * RESULTS_PER_PAGE
        return self.hits[start : start + RESULTS_PER_PAGE]

    def has_next(self) -> bool:
        return self.page_num * RESULTS_PER_PAGE < len(self.hits)


def clickables(state: BrowserState, catalogue: Catalogue) -> list[str]:
    """The clickable strings of the current page, in page order (lowercase)."""
    if state.page == RESULTS:
        links = [BACK_TO_SEARCH]
        if state.page_num > 1:
            links.append(PREV)
        if state.has_next():
            links.append(NEXT)
        return links + list(state.page_hits())
    if state.page == ITEM:
        assert state.asin is not None
        product = catalogue.get(state.asin)
        return [BACK_TO_SEARCH, PREV, *product.option_values(), *SUB_PAGES, BUY_NOW]
    if state.page == ITEM_SUB:
        return [BACK_TO_SEARCH, PREV]
    return []


def _price(value: float) -> str:
    return f"${value:.2f}"


def _instruction(instruction: str) -> list[str]:
    return ["Instruction:", instruction]


def render(state: BrowserState, catalogue: Catalogue, instruction: str) -> str:
    """The text observation of the current page."""
    if state.page == SEARCH:
        return SEP.join(["WebShop", *_instruction(instruction), "Search"])
    if state.page == RESULTS:
        return SEP.join(_instruction(instruction) + _results(state, catalogue))
    assert state.asin is not None
    product = catalogue.get(state.asin)
    if state.page == ITEM:
        clicked = [
            f"You have clicked {state.selected[g]}." for g, _ in product.options if g in state.selected
        ]
        return SEP.join(clicked + _instruction(instruction) + _item(product))
    if state.page == ITEM_SUB:
        body = [_LABELS[BACK_TO_SEARCH], _LABELS[PREV], *_sub_page(product, state.sub or "")]
        return SEP.join(_instruction(instruction) + body)
    raise ValueError(f"no page to render for {state.page!r}")


def _results(state: BrowserState, catalogue: Catalogue) -> list[str]:
    parts = [_LABELS[BACK_TO_SEARCH], f"Page {state.page_num} (Total results: {len(state.hits)})"]
    if state.page_num > 1:
        parts.append(_LABELS[PREV])
    if state.has_next():
        parts.append(_LABELS[NEXT])
    for asin in state.page_hits():
        product = catalogue.get(asin)
        parts += [asin, product.title, _price(product.price)]
    return parts


def _item(product: Product) -> list[str]:
    parts = [_LABELS[BACK_TO_SEARCH], _LABELS[PREV]]
    for group, values in product.options:
        parts += [group, *values]
    parts += [product.title, f"Price: {_price(product.price)}", f"Rating: {product.rating:.1f}"]
    parts += [name.capitalize() for name in SUB_PAGES]
    parts.append(_LABELS[BUY_NOW])
    return parts


def _sub_page(product: Product, sub: str) -> list[str]:
    if sub == "description":
        return [product.description]
    if sub == "features":
        return list(product.bullets)
    if sub == "reviews":
        return [f for r in product.reviews for f in (r.title, f"{r.score} out of 5 stars", r.body)]
    return list(product.attributes)


def render_done(product: Product, selected: dict[str, str], reward: float) -> str:
    """The page shown after ``buy now`` (the episode is over, so the score is shown as in WebShop)."""
    chosen = [f"{g}: {selected[g]}" for g, _ in product.options if g in selected]
    return SEP.join(
        [
            "Thank you for shopping with us!",
            "Purchased",
            product.asin,
            product.title,
            *chosen,
            "Your score (min 0.0, max 1.0)",
            f"{reward:.2f}",
        ]
    )
