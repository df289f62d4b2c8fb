"""The ``shop`` environment: WebShop's page graph, BM25 search and reward on a generated catalogue.

Kit: :mod:`.kit` (the ``shop`` :class:`~reharness.envs.EnvKit`, Harness-R1's ``webshop``), ``harness.yaml``
(the base harness H0), ``catalogue.yaml`` (the word lists of :mod:`.vocab`).

- :mod:`.env`: :class:`ShopEnv` (``reharness/Shop-v0``), the gymnasium env;
- :mod:`.session`: one shopping episode as a state machine: parse an action, move pages, grade the purchase;
- :mod:`.pages`: the pages: browser state, what each page shows and which strings on it are clickable;
- :mod:`.tools`: the tool-calling view of the two actions, ``search(query)`` and ``click(target)``;
- :mod:`.vocab`: the word lists the catalogue is generated from, loaded and checked;
- :mod:`.catalogue`: the generated product catalogue (WebShop's scraped one is not obtainable);
- :mod:`.search`: BM25 product search over the catalogue;
- :mod:`.goals`: shopping goals: WebShop-style instructions drawn from a goal product;
- :mod:`.reward`: WebShop's purchase reward, re-derived for the generated catalogue;
- :mod:`.expert`: the scripted solver: the correct next action from the current page;
- :mod:`.failures`: failure evidence, premature-purchase detector, runtime signals, masking, leakage facts;
- :mod:`.operators`: repair operators: premature-purchase guard, repeated-search guard, stall breaker;
- :mod:`.r1`: Harness-R1's WebShop ``ctx`` adapter, with the official meanings and vocabularies;
- :mod:`.tiny`: the tiny-agent recipe: recipes, perturbations that never buy, a premature ``buy now``.
"""

from reharness.kits.shop.catalogue import Catalogue, Product, build_catalogue
from reharness.kits.shop.env import ShopEnv
from reharness.kits.shop.reward import Goal, RewardBreakdown, purchase_reward

__all__ = ["Catalogue", "Goal", "Product", "RewardBreakdown", "ShopEnv", "build_catalogue", "purchase_reward"]
