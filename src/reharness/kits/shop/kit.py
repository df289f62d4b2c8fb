"""The ``shop`` kit: a WebShop-like catalogue, BM25 search and WebShop's reward (Harness-R1's ``webshop``)."""

from typing import Any

from reharness.envs.kit import EnvKit
from reharness.kits.shop import failures
from reharness.kits.shop.operators import PurchaseGuard, SearchDedupe, StallBreaker
from reharness.kits.shop.r1 import ShopAdapter
from reharness.kits.shop.tiny import TINY

#: lenient_extract: an action written anywhere in a reply that yields none (a pretrained target's prose)
LENIENT_PATTERN = """        found = re.search(r"\\b(search|click)\\s*\\[([^\\]\\n]{1,200})\\]", line, re.I)
        if found:
            nb["extracted"] = nb.get("extracted", 0) + 1
            verb, value = found.group(1).lower(), found.group(2).strip()
            return {"type": "rewrite_action", "action": verb + "[" + value + "]"}
"""

#: How the generic operators are tuned to shop.
OPERATOR_SETTINGS: dict[str, dict[str, Any]] = {
    "snap_to_admissible": {"skip_prefix": "search["},
    "lenient_extract": {"pattern_code": LENIENT_PATTERN},  # searches are free text: only clicks are snapped
    "loop_breaker": {
        "advice": "Do something different: search with other keywords, open another product, or buy the "
        "current product if it matches the task."
    },
    "goal_reminder": {"progress": ("state.page_type", "selected_options", "state.current_price")},
    "format_reminder": {
        "message": "Your last reply had no valid action. Reply with exactly one line "
        "'Action: search[keywords]' or 'Action: click[value]', where value is one of the clickable options "
        "on the page."
    },
    "step_warning": {
        "advice": "Decide now: select the required options and buy the best matching product you have found."
    },
}

KIT = EnvKit(
    name="shop",
    env="reharness.kits.shop.env:ShopEnv",
    summary="WebShop-like catalogue, BM25 search, item pages, WebShop reward",
    gym_id="reharness/Shop-v0",
    harnesses={"base": "reharness.kits.shop:harness.yaml"},
    detectors=(failures.detect,),
    signals=failures.signals,
    mask_rules=failures.MASK_RULES,
    leakage=failures.leakage,
    operators=(PurchaseGuard(), SearchDedupe(), StallBreaker()),
    operator_settings=OPERATOR_SETTINGS,
    ctx_fields={
        "state.page_type": "str",
        "state.buy_now_available": "bool",
        "state.duplicate_search_count": "int",
        "state.product_stall_turns": "int",
        "state.same_click_count": "int",
    },
    r1_adapter=ShopAdapter,
    tiny=TINY,
)
