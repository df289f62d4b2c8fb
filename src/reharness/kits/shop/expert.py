"""The shop's scripted solver: the correct next action from the current page, whatever happened before.

* search page: search for the instruction's product phrase (its attributes and product type); the task's
  target is by construction the best-ranked product of that search that satisfies every constraint;
* results: click the target if it is on this page, page towards it (``next >`` / ``< prev``) if it is among
  the hits, otherwise go ``back to search``;
* item page of another product: ``< prev`` when the target is among the current hits, else ``back to
  search``; item page of the target: click each required option value not selected yet, then ``buy now``;
* sub-pages: ``< prev``.

Because it reads only the current state, it also recovers after random or invalid actions.
"""

from __future__ import annotations

from collections.abc import Sequence

from reharness.core.errors import EnvError
from reharness.kits.shop.pages import BACK_TO_SEARCH, BUY_NOW, ITEM, ITEM_SUB, NEXT, PREV, RESULTS, SEARCH
from reharness.kits.shop.search import RESULTS_PER_PAGE
from reharness.kits.shop.session import ShopSession


def click(value: str) -> str:
    return f"click[{value}]"


def expert_action(session: ShopSession, target: str, options: Sequence[tuple[str, str]], query: str) -> str:
    """Next action towards buying ``target`` with the option values ``options`` ((group, value) pairs)."""
    state = session.state
    if state.page == SEARCH:
        return f"search[{query}]"
    if state.page == RESULTS:
        if target not in state.hits:
            return click(BACK_TO_SEARCH)
        page = state.hits.index(target) // RESULTS_PER_PAGE + 1
        if page == state.page_num:
            return click(target)
        return click(NEXT if page > state.page_num else PREV)
    if state.page == ITEM:
        if state.asin != target:
            return click(PREV if target in state.hits else BACK_TO_SEARCH)
        for group, value in options:
            if state.selected.get(group) != value:
                return click(value)
        return click(BUY_NOW)
    if state.page == ITEM_SUB:
        return click(PREV)
    raise EnvError("shop: the episode is over, there is no next action", hint="call reset() first")
