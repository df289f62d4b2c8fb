"""``ShopEnv`` (``reharness/Shop-v0``): a WebShop-like shopping environment on a generated catalogue.

The agent reads an instruction ("i need a long lasting lipstick with color: ruby red, and price lower than
30.00 dollars"), searches (``search[keywords]``, BM25 over ~1,200 generated products), opens products
(``click[b0…]``), selects option values, reads sub-pages and buys (``click[buy now]``). Buying ends the
episode with WebShop's reward (see :mod:`reharness.kits.shop.reward`); success means reward 1. Running out of
the 20-round budget without buying scores 0.

``admissible_actions()`` lists the current clickables as ``click[...]`` strings; on the search page, whose
only control is the search bar, it lists the single action ``search[<product phrase>]`` with the phrase the
instruction names (attributes + product type), since free-text search cannot be enumerated.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.core.errors import EnvError
from reharness.envs.base import Task, TextEnv, Transition
from reharness.kits.shop.catalogue import Catalogue, build_catalogue
from reharness.kits.shop.expert import expert_action
from reharness.kits.shop.goals import TASK_TYPE, draw_goal, select_target, with_target
from reharness.kits.shop.pages import BUY_NOW, ITEM
from reharness.kits.shop.reward import Goal
from reharness.kits.shop.search import tokenize
from reharness.kits.shop.session import ShopSession
from reharness.kits.shop.tools import TOOLS, action_from_tool_call, tool_call_from_action

_PRICE_WORDS = frozenset({"price", "lower", "than", "dollars"})
_GOLD_KEYS = ("product_query", "path", "nouns", "attributes", "options", "price_upper")
_STATE_KEYS = ("query", "product", "attributes", "options", "price_upper")


class ShopEnv(TextEnv):
    """WebShop semantics on a generated catalogue (see the module docstring)."""

    name: ClassVar[str] = "shop"
    env_id: ClassVar[str] = "reharness/Shop-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = 20

    def __init__(
        self, split: str = "train", max_steps: int | None = None, render_mode: str | None = None
    ) -> None:
        super().__init__(split=split, max_steps=max_steps, render_mode=render_mode)
        self.catalogue: Catalogue = build_catalogue()
        self.session: ShopSession | None = None
        self._target = ""
        self._options: list[tuple[str, str]] = []

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        task = self.draw_task(
            split, index, lambda rng, task_id: draw_goal(rng, self.catalogue, split, task_id)
        )
        return with_target(task, self.catalogue)

    def _load(self, task: Task) -> None:
        missing = [f"gold[{k!r}]" for k in _GOLD_KEYS if k not in task.gold]
        missing += [f"state[{k!r}]" for k in _STATE_KEYS if k not in task.state]
        if missing:
            raise EnvError(
                f"shop: task {task.task_id!r} lacks {', '.join(missing)}",
                hint="build shop tasks with ShopEnv.generate_task / get_task",
            )
        goal = Goal.from_gold(task.gold)
        target = task.gold.get("target") or select_target(self.catalogue, str(task.state["query"]), goal)
        if not target or target not in self.catalogue.by_asin:
            raise EnvError(
                f"shop: task {task.task_id!r} has no buyable target product", hint="regenerate the task"
            )
        self._target = str(target)
        self._options = list(goal.options)
        self.session = ShopSession(self.catalogue, task.instruction, goal)

    def _session(self) -> ShopSession:
        if self.session is None:
            raise EnvError("shop: no episode in progress", hint="call env.reset() first")
        return self.session

    # ------------------------------------------------------------------ dynamics
    def _initial_observation(self) -> str:
        return self._session().observation()

    def _transition(self, action: str) -> Transition:
        result = self._session().step(action)
        if result.done and result.outcome is not None:
            reward = result.outcome.reward
            info = {"purchased": self._session().purchased, "reward_breakdown": result.outcome.as_dict()}
            return Transition(result.observation, reward, True, reward == 1.0, reward, info=info)
        info = {"invalid_reason": result.message} if result.invalid else {}
        return Transition(result.observation, invalid=result.invalid, info=info)

    def admissible_actions(self) -> list[str] | None:
        session = self._session()
        actions = [f"search[{self._query()}]"] if session.has_search_bar() else []
        return actions + [f"click[{c}]" for c in session.clickables()]

    def _query(self) -> str:
        assert self.task is not None
        return str(self.task.state["query"])

    # ------------------------------------------------------------------ agents
    def expert_action(self) -> str:
        if self.done:
            raise EnvError("shop: the episode is over, there is no next action", hint="call reset() first")
        return expert_action(self._session(), self._target, self._options, self._query())

    def random_action(self, rng: random.Random) -> str:
        if self.done:
            raise EnvError("shop: the episode is over, there is no action to take", hint="call reset() first")
        session = self._session()
        if session.has_search_bar():
            assert self.task is not None
            words = [w for w in tokenize(self.task.instruction) if w not in _PRICE_WORDS]
            picked = rng.sample(words, rng.randint(1, min(4, len(words))))
            return f"search[{' '.join(picked)}]"
        return f"click[{rng.choice(session.clickables())}]"

    # ------------------------------------------------------------------ tool calling
    def tools(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in TOOLS]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return action_from_tool_call(name, arguments)

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return tool_call_from_action(action)

    # ------------------------------------------------------------------ hook views
    def runtime_state(self) -> dict[str, Any]:
        """WebShop's ``ctx`` fields (REFERENCE §1); only what the agent has seen, never the target.

        ``page_type`` is one of search/results/item/item_sub/done. ``duplicate_search_count`` counts searches
        whose words repeat an earlier search; ``same_click_count`` is how many times in a row the latest
        click (valid or not) repeated the action before it; ``product_stall_turns`` is the number of steps
        spent on the current product's item page and sub-pages; ``selected_options`` maps option group to
        the value selected on the current item page.
        """
        session = self._session()
        browser = session.state
        product = self.catalogue.get(browser.asin) if browser.asin else None
        assert self.task is not None
        return {
            "state": {
                "page_type": browser.page,
                "clickables": session.clickables(),
                "has_search_bar": session.has_search_bar(),
                "buy_now_available": browser.page == ITEM and BUY_NOW in session.clickables(),
                "current_price": product.price if product is not None else None,
                "price_max": float(self.task.state["price_upper"]),
                "duplicate_search_count": session.duplicate_search_count,
                "product_stall_turns": session.product_stall_turns,
                "same_click_count": session.same_click_count,
                "current_item": browser.asin,
                "current_query": browser.query or None,
                "results_page": browser.page_num if browser.query else None,
                "total_results": len(browser.hits) if browser.query else None,
                "sub_page": browser.sub,
            },
            "search_queries": list(session.search_queries),
            "visited_items": list(session.visited_items),
            "selected_options": dict(browser.selected),
        }

    def task_fields(self) -> dict[str, Any]:
        """What the instruction states: product phrase, required attributes and options, price bound."""
        assert self.task is not None
        state = self.task.state
        options = {str(g): str(v) for g, v in state["options"]}
        fields: dict[str, Any] = {
            "task_type": TASK_TYPE,
            "instruction": self.task.instruction,
            "query": state["query"],
            "product": state["product"],
            "required_attributes": list(state["attributes"]),
            "required_options": options,
            "price_max": float(state["price_upper"]),
        }
        fields.update({f"required_{group}": value for group, value in options.items()})
        return fields
