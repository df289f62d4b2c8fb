"""The ``shop`` environment: WebShop's page graph, BM25 search and reward on a generated catalogue."""

from reharness.kits.shop.catalogue import Catalogue, Product, build_catalogue
from reharness.kits.shop.env import ShopEnv
from reharness.kits.shop.reward import Goal, RewardBreakdown, purchase_reward

__all__ = ["Catalogue", "Goal", "Product", "RewardBreakdown", "ShopEnv", "build_catalogue", "purchase_reward"]
