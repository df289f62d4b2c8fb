"""WebShop's purchase reward, re-derived for the generated catalogue.

    reward = (matched attributes + matched options + price_ok) / (n_attributes + n_options + 1) * r_type

* **Attributes**: a goal attribute matches when ``rapidfuzz.fuzz.token_set_ratio`` with one of the purchased
  product's attributes is above 85, or when it is a substring of the product's title, bullets or description
  (lowercased), as in WebShop's ``get_attribute_reward``.
* **Options**: a goal option value matches when a *selected* option value scores above 85 with
  ``token_set_ratio`` (WebShop's ``get_option_reward``). WebShop first maps colours through
  ``normalize_color``; the generated option pools are already normalised and fuzzy-distinct, so it is skipped.
* **Price**: 1 when the product's price is at most the instruction's upper bound.
* **Type** (WebShop's ``get_type_reward``): ``query_match`` = same product query (product type);
  ``category_match`` = the two breadcrumbs share at least 2 levels; ``title_score`` = share of the goal
  name's nouns found among the purchased name's nouns (WebShop tags nouns with spaCy; here a name's nouns
  are its brand words plus its product-type nouns, recorded in the catalogue). ``r_type`` starts at 1,
  becomes 0.5 when none of query/category match or ``title_score > 0.2`` holds, 0.1 when
  ``title_score < 0.1`` and 0 when ``title_score == 0`` (a goal with no nouns scores 0.2, as in WebShop).

Success is ``reward == 1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from reharness.kits.shop.catalogue import Product

FUZZY_THRESHOLD = 85.0


@dataclass(frozen=True)
class Goal:
    """What the purchase is graded against (built from a task's ``gold``)."""

    query: str
    path: tuple[str, ...]
    nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (group, value) pairs the instruction asks for
    price_upper: float

    @classmethod
    def from_gold(cls, gold: Mapping[str, Any]) -> Goal:
        return cls(
            query=str(gold["product_query"]),
            path=tuple(gold["path"]),
            nouns=tuple(gold["nouns"]),
            attributes=tuple(gold["attributes"]),
            options=tuple((str(g), str(v)) for g, v in gold["options"]),
            price_upper=float(gold["price_upper"]),
        )


@dataclass(frozen=True)
class RewardBreakdown:
    reward: float
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    attribute_matches: int
    option_matches: int
    price_ok: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def type_reward(product: Product, goal: Goal) -> tuple[float, bool, bool, float]:
    """``(r_type, query_match, category_match, title_score)`` following WebShop's ``get_type_reward``."""
    query_match = product.query == goal.query
    category_match = len(set(product.path) & set(goal.path)) >= 2
    desired = set(goal.nouns)
    title_score = 0.2 if not desired else len(set(product.nouns) & desired) / len(desired)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def attribute_matches(product: Product, attributes: Sequence[str]) -> int:
    """How many goal ``attributes`` the product has (fuzzy attribute match or substring of its text)."""
    title = product.title.lower()
    bullets = " ".join(product.bullets).lower()
    description = product.description.lower()
    count = 0
    for wanted in attributes:
        if any(fuzz.token_set_ratio(have, wanted) > FUZZY_THRESHOLD for have in product.attributes) or (
            wanted in title or wanted in bullets or wanted in description
        ):
            count += 1
    return count


def option_matches(selected: Sequence[str], wanted: Sequence[str]) -> int:
    """How many goal option values are matched by one of the selected values."""
    return sum(1 for w in wanted if any(fuzz.token_set_ratio(s, w) > FUZZY_THRESHOLD for s in selected))


def purchase_reward(product: Product, selected: Mapping[str, str], goal: Goal) -> RewardBreakdown:
    """Grade buying ``product`` with the option values ``selected`` (group -> value) against ``goal``."""
    r_type, query_match, category_match, title_score = type_reward(product, goal)
    n_attr = attribute_matches(product, goal.attributes)
    n_opt = option_matches([v.lower() for v in selected.values()], [v for _, v in goal.options])
    price_ok = product.price <= goal.price_upper
    total = (n_attr + n_opt + int(price_ok)) / (len(goal.attributes) + len(goal.options) + 1)
    return RewardBreakdown(
        reward=round(total * r_type, 6),
        r_type=r_type,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
        attribute_matches=n_attr,
        option_matches=n_opt,
        price_ok=price_ok,
    )
