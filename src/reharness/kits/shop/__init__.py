"""The ``shop`` kit: a WebShop-like catalogue with BM25 search and WebShop's reward (Harness-R1's ``webshop``)."""

from reharness.envs.kit import EnvKit

KIT = EnvKit(
    name="shop",
    env="reharness.envs.shop.env:ShopEnv",
    summary="WebShop-like catalogue, BM25 search, item pages, WebShop reward",
    gym_id="reharness/Shop-v0",
    harnesses={"base": "reharness.kits.shop:harness.yaml"},
    r1_benchmark="webshop",
)
