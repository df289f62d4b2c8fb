"""Shopping goals: WebShop-style instructions drawn from a goal product, and the product the expert buys.

A goal comes from one catalogue product P: a subset of P's attributes, one value for each of P's option
groups and a price bound above P's price (as in WebShop: the larger of two of the next four multiples of $10
above the price). The instruction states all of it, e.g. "i need a long lasting lipstick with color: ruby
red, and price lower than 30.00 dollars". The search phrase (attributes + product type) is recorded in the
task state because the instruction says it; P itself and the grading details are ``gold``.

The *target* (the product the expert buys) is the best-ranked product, for a search with the search phrase,
that scores reward 1 when bought with the goal's options; often that is P, sometimes a similar product ranked
above it. Products ranked above the target miss some constraint (an attribute, an option value, the price),
so the agent has to look before it buys.
"""

from __future__ import annotations

import random
from typing import Any

from reharness.core.errors import EnvError
from reharness.envs.base import Task
from reharness.kits.shop.catalogue import Catalogue, Product
from reharness.kits.shop.reward import Goal, purchase_reward
from reharness.kits.shop.search import search_products

TASK_TYPE = "shop"
_PRICE_STEPS = tuple(10.0 * i for i in range(1, 100))
_OPENERS = ("i am looking for", "i need", "i want", "find me", "i would like", "can you get me")


def price_bound(rng: random.Random, price: float) -> float:
    """WebShop's rule: the larger of two random picks among the next four multiples of 10 above ``price``."""
    above = [p for p in _PRICE_STEPS if p > price][:4]
    if len(above) >= 2:
        return max(rng.sample(above, 2))
    return above[0] if above else round(price * 1.5, 2)


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _article(phrase: str, next_word: str) -> str:
    if phrase.endswith("s") and not phrase.endswith("ss"):
        return ""
    return "an " if next_word[:1] in "aeio" else "a "


def instruction_text(
    rng: random.Random, phrase: str, attributes: list[str], options: list[tuple[str, str]], price: float
) -> str:
    """One WebShop-style instruction stating the product phrase, attributes, options and price bound."""
    opener = rng.choice(_OPENERS)
    if rng.random() < 0.6:
        core = f"{' and '.join(attributes)} {phrase}"
        body = f"{_article(phrase, core)}{core}"
    else:
        verb = "are" if _article(phrase, phrase) == "" else "is"
        body = f"{_article(phrase, phrase)}{phrase} that {verb} {_join(attributes)}"
    if options:
        body += " with " + ", and ".join(f"{group}: {value}" for group, value in options)
    return f"{opener} {body}, and price lower than {price:.2f} dollars"


def draw_goal(rng: random.Random, catalogue: Catalogue, split: str, task_id: str) -> Task:
    """Draw one task from ``rng`` only (``gold['target']`` is filled in by :func:`with_target`)."""
    product = catalogue.products[rng.randrange(len(catalogue))]
    n_attr = min(len(product.attributes), rng.choice((1, 1, 2, 2, 3)))
    attributes = sorted(rng.sample(product.attributes, n_attr), key=product.attributes.index)
    options = [(group, rng.choice(values)) for group, values in product.options]
    upper = price_bound(rng, product.price)
    query = " ".join([*attributes, product.query])
    instruction = instruction_text(rng, product.query, attributes, options, upper)
    state: dict[str, Any] = {
        "query": query,
        "product": product.query,
        "attributes": attributes,
        "options": [[g, v] for g, v in options],
        "price_upper": upper,
    }
    gold: dict[str, Any] = {
        "goal_asin": product.asin,
        "product_query": product.query,
        "path": list(product.path),
        "nouns": list(product.nouns),
        "attributes": attributes,
        "options": [[g, v] for g, v in options],
        "price_upper": upper,
    }
    return Task(
        task_id=task_id, split=split, instruction=instruction, task_type=TASK_TYPE, state=state, gold=gold
    )


def satisfies(product: Product, goal: Goal) -> bool:
    """Whether buying ``product`` with the goal's option values (where offered) earns reward 1."""
    selected = {g: v for g, v in goal.options if v in dict(product.options).get(g, ())}
    return purchase_reward(product, selected, goal).reward == 1.0


def select_target(catalogue: Catalogue, query: str, goal: Goal) -> str | None:
    """The first product of the search results for ``query`` that fully satisfies ``goal``."""
    for asin in search_products(query):
        if satisfies(catalogue.get(asin), goal):
            return asin
    return None


def with_target(task: Task, catalogue: Catalogue) -> Task:
    """Return ``task`` with ``gold['target']`` set to the product the expert buys."""
    goal = Goal.from_gold(task.gold)
    target = select_target(catalogue, str(task.state["query"]), goal)
    if target is None:  # cannot happen for generated goals: the goal product itself always qualifies
        raise EnvError(f"shop: no product satisfies the goal of {task.task_id}", hint="report this as a bug")
    return Task(
        task_id=task.task_id,
        split=task.split,
        instruction=task.instruction,
        task_type=task.task_type,
        state=task.state,
        gold={**task.gold, "target": target},
    )
