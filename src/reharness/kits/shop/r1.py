"""Harness-R1's WebShop ``ctx`` for ``shop`` (spec §2.1), with the official meanings and vocabularies.

``state.page_type`` is the H1 tracker's (``home`` / ``search_results`` / ``product_detail`` / ``unknown``),
updated only after a step; clickables and the search bar are read from the page the agent is on (pre-action
at ``make_pre_hint``/``on_before_action``, post-step at ``on_post_step``, none at ``on_init``). Tool names
are the official ``search_action`` / ``click_action``; a bare forced/rewritten value is wrapped as
``search[...]`` when the agent searched, else ``click[...]``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reharness.runtime.effects import Effect
from reharness.runtime.r1.adapter import Proposal, R1Adapter

if TYPE_CHECKING:
    from reharness.kits.shop.env import ShopEnv

PRICE_TOLERANCE = 0.05
_PAGE_TYPES = {"search": "home", "results": "search_results", "item": "product_detail"}
_ACTION = re.compile(r"^\s*(search|click)\[(.*)\]\s*$", re.DOTALL | re.IGNORECASE)
_PRICE = re.compile(r"price:\s*\$\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_BUDGET = re.compile(r"(?:lower than|less than|under|below|<)\s*\$?\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_ASIN = re.compile(r"^[a-z0-9]{10}$", re.IGNORECASE)
_TYPES = (
    ("apparel", r"shirt|dress|pants|jeans|jacket|shoe|sneaker|boot|sandal|sock|hoodie|skirt|coat|sweater"),
    ("beauty", r"lipstick|makeup|shampoo|lotion|cream|serum|perfume|nail|hair|skin|mascara"),
    ("food", r"snack|coffee|tea|chocolate|candy|sauce|cookie|food|drink|gluten|organic"),
    ("tech", r"headphone|phone|charger|cable|speaker|laptop|camera|keyboard|mouse|usb|bluetooth|tablet"),
    ("home", r"pillow|blanket|curtain|lamp|chair|table|rug|towel|sheet|mattress|sofa|shelf"),
)
MATERIALS = (
    *[
        "cotton",
        "polyester",
        "nylon",
        "wool",
        "leather",
        "suede",
        "canvas",
        "denim",
        "linen",
        "silk",
        "fleece",
        "spandex",
        "rubber",
        "plastic",
    ],
    *("metal", "stainless steel", "aluminum", "wood", "bamboo", "ceramic"),
)


def tool_of(action: str) -> tuple[str, str]:
    """``search[x]`` → (``search_action``, x); ``click[x]`` → (``click_action``, x); else ("", action)."""
    match = _ACTION.match(action or "")
    if match is None:
        return "", action or ""
    return f"{match.group(1).lower()}_action", match.group(2)


def _task_type(instruction: str) -> str:
    low = instruction.lower()
    return next((name for name, words in _TYPES if re.search(rf"\b(?:{words})", low)), "general")


class ShopAdapter(R1Adapter):
    """WebShop's ctx: ``action``, ``state``, ``task``, ``predicates``, ``webshop`` and the extras."""

    benchmark = "webshop"
    env: ShopEnv  # the shop env itself: its session and catalogue
    tool_hint_target = "*"
    shared_fields = frozenset({"observation", "max_step"})

    def __init__(self, env: ShopEnv, max_steps: int) -> None:
        super().__init__(env, max_steps)
        fields = env.task_fields()
        instruction = str(fields.get("instruction", ""))
        options = dict(fields.get("required_options") or {})
        low = instruction.lower()
        material = next((m for m in MATERIALS if re.search(rf"\b{m}\b", low)), None)
        self.task = {
            "task_type": _task_type(instruction),
            "required_color": options.get("color"),
            "required_size": options.get("size"),
            "required_material": material,
        }
        budget = _BUDGET.search(instruction)
        self.price_max = float(budget.group(1)) if budget else None
        self.page_type = "unknown"
        self.current_price: float | None = None
        self.back_to_search = 0
        self.queries: list[str] = []
        self.query_counts: Counter[str] = Counter()  # the most repeated query is read on every hook call
        self.asins: list[str] = []
        self.current_asin: str | None = None
        self.selected: dict[str, str] = {}
        self.stall = 0
        self.started = False

    def executed(self, action: str, observation: str, info: dict[str, Any]) -> None:
        super().executed(action, observation, info)
        self.started = True
        session = self.env.session
        tool, value = tool_of(action)
        if action == "click[back to search]":
            self.back_to_search += 1
        if tool == "search_action":
            self.queries.append(value)
            self.query_counts[value] += 1
        previous_asin = self.current_asin if self.page_type == "product_detail" else None
        self.page_type = _PAGE_TYPES.get(session.state.page, "unknown") if session is not None else "unknown"
        if self.page_type == "product_detail" and session is not None:  # a detail page needs a session
            asin = str(session.state.asin or "").upper()
            if tool == "click_action" and _ASIN.match(value) and value.upper() == asin:
                if asin not in self.asins:
                    self.asins.append(asin)
                self.selected = {}
            self.current_asin = asin or self.current_asin
            self.stall = self.stall + 1 if previous_asin == self.current_asin else 1
            price = _PRICE.search(observation)
            if price:
                self.current_price = float(price.group(1))
            if tool == "click_action":
                group = self._group(value.lower())
                if group is not None:
                    self.selected[group] = value.lower()
        else:
            self.stall = 0

    def _group(self, value: str) -> str | None:
        product = self._product()
        if product is None:
            return None
        group = product.option_group_of(value)
        if group is None:
            return None
        return group if group in ("color", "size") else "other"

    def _product(self) -> Any:
        session = self.env.session
        asin = session.state.asin if session is not None else None
        return self.env.catalogue.get(asin) if asin else None

    def _options(self, clickables: list[str]) -> dict[str, list[str]]:
        if self.page_type != "product_detail" and not (
            self.env.session and self.env.session.state.page == "item"
        ):
            return {}
        out: dict[str, list[str]] = {}
        for value in clickables:
            group = self._group(value)
            if group is not None:
                out.setdefault(group, []).append(value)
        return out

    def ctx(self, hook: str, step: int, proposal: Proposal | None = None) -> dict[str, Any]:
        session = self.env.session if hook != "on_init" else None  # on_init: no live page yet
        live = session is not None
        has_search_bar = bool(session is not None and session.has_search_bar())
        # WebShop's home page lists its search button as the one clickable
        clickables = (["search"] if has_search_bar else []) + (
            [c.lower() for c in session.clickables()] if session is not None else []
        )
        tool, value, final = "", "", None
        if hook == "on_before_action" and proposal is not None:
            tool, value = tool_of(proposal.action)
            final = proposal.final if tool else None
        value_normalized = str(value).strip().lower()
        page_type = self.page_type if self.started else "unknown"
        options = self._options(clickables) if live else {}
        remaining = self.remaining(hook, step)
        duplicate = max(self.query_counts.values(), default=0)
        state = {
            "page_type": page_type,
            "has_search_bar": has_search_bar,
            "clickables": clickables,
            "buy_now_available": "buy now" in clickables,
            "back_to_search_count": self.back_to_search,
            "duplicate_search_count": duplicate,
            "product_stall_turns": self.stall,
            "same_click_count": 0,
            "remaining_steps": remaining,
            "current_price": self.current_price,
            "price_max": self.price_max,
        }
        over = (
            self.current_price is not None
            and self.price_max is not None
            and self.current_price > self.price_max * (1 + PRICE_TOLERANCE)
        )
        buying = tool == "click_action" and value_normalized == "buy now"
        return {
            "action": {
                "tool": tool,
                "value": value,
                "value_normalized": value_normalized,
                "final_action": final,
            },
            "state": state,
            "task": dict(self.task),
            "predicates": {
                "required_options_unselected": buying and self._unselected(options),
                "product_price_over_budget": over,
                "same_click_repeated": False,
                "duplicate_search_repeated": duplicate >= 2,
                "search_loop_detected": self.back_to_search >= 2 or duplicate >= 2,
                "product_page_stalled": self.stall >= 2,
                "buy_now_available": state["buy_now_available"],
                "search_not_available": not has_search_bar,
                "action_not_admissible": False,
            },
            "observation": self.observation if hook == "on_post_step" else self.shown,
            "step": step,
            "max_step": self.max_steps,
            "remaining_steps": remaining,
            "webshop": {
                "search_queries": list(self.queries),
                "asins_visited": list(self.asins),
                "current_asin": self.current_asin,
                "selected_attributes": dict(self.selected),
                "attribute_options": options,
            },
        }

    def _unselected(self, options: dict[str, list[str]]) -> bool:
        if self.page_type != "product_detail" or not options:
            return False
        for group in ("color", "size"):
            wanted = self.task[f"required_{group}"]
            if (
                wanted
                and wanted.lower() in options.get(group, [])
                and self.selected.get(group) != wanted.lower()
            ):
                return True
        return not self.selected

    def effect_action(self, effect: Effect, proposal: Proposal | None) -> Effect:
        action = effect.action or ""
        if "[" in action and action.endswith("]"):
            return effect
        searched = proposal is not None and tool_of(proposal.action)[0] == "search_action"
        return replace(effect, action=f"{'search' if searched else 'click'}[{action}]")
