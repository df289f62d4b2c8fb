"""Huge agent actions end their step at once in every built-in env (issue 20 item 2)"""

from __future__ import annotations

import time

import pytest

from reharness.envs import make_env
from reharness.kits.shop.search import MAX_QUERY_TOKENS, search_products

ACTIONS = {
    "shop": [
        "search[" + "shoe " * 40_000 + "]",  # 8.7 s before the query was cut to its first words
        "search[" + "a" * 200_000 + "]",
        "click[" + "x" * 200_000 + "]",
        "search[" + "[" * 100_000 + "]" * 100_000,
    ],
    "household": ["put " + "a " * 50_000 + "in b", "go to " + "x" * 200_000, "x " * 100_000],
    "apps": [
        "x " * 100_000,
        "```python\n" + "x = 1\n" * 5_000 + "```",  # runs in the confined interpreter
        "```python\n" + "(" * 5_000 + "1" + ")" * 5_000 + "\n```",  # the worker's parser gives up, not ours
        "```python\n" + "a" * 200_000,
        "```" * 60_000,
    ],
    "db": [
        "Action: " * 25_000,
        "Action: Operation\n```sql\nSELECT " + "(" * 5_000 + "1" + ")" * 5_000 + "\n```",
    ],
}


@pytest.mark.parametrize(("env_name", "action"), [(e, a) for e, acts in ACTIONS.items() for a in acts])
def test_a_huge_action_ends_its_step_at_once(env_name: str, action: str) -> None:
    env = make_env(env_name, split="test")
    env.reset(seed=0, options={"task": 0})
    start = time.monotonic()
    observation, _, terminated, _, _ = env.step(action)
    assert time.monotonic() - start < 1.0
    assert isinstance(observation, str) and not terminated


def test_a_long_query_is_scored_by_its_first_words() -> None:
    words = ["red", "cotton", "shirt", "large"] * (MAX_QUERY_TOKENS // 4)
    long_query = " ".join(words + ["shoes"] * 1_000)  # the extra words would change the ranking
    assert search_products(long_query) == search_products(" ".join(words))
    assert search_products(long_query)  # the cut query still finds products
