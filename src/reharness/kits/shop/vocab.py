"""The word lists the shop catalogue is generated from: categories, product types, attributes, option values.

The data lives in ``catalogue.yaml`` next to this module (one row per product type, easy to read and
extend); this module loads it into frozen dataclasses and rejects malformed rows with a clear error. The lists
are chosen so WebShop's fuzzy matching cannot confuse them: within a category no two attributes, and within
an option pool no two values, score above 85 with ``rapidfuzz.fuzz.token_set_ratio`` (the tests check this),
so "x-large" never passes for "xx-large" and "2 pack" never passes for "3 pack". The neutral phrases used to
pad bullets, descriptions and reviews never contain an attribute, so an attribute is found in a product's
text only when the product really has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reharness.core.errors import DataError


@dataclass(frozen=True)
class ProductType:
    """One kind of product (``lipstick``): search phrase, noun words, breadcrumb, options, price range."""

    phrase: str
    nouns: tuple[str, ...]
    path: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (group shown on the page, pool in OPTION_POOLS)
    price: tuple[float, float]
    styles: tuple[str, ...]


@dataclass(frozen=True)
class Category:
    """A top-level department with its brands, attribute pool and product types."""

    name: str
    root: str
    brands: tuple[str, ...]
    attributes: tuple[str, ...]
    types: tuple[ProductType, ...]


_DATA_FILE = Path(__file__).with_name("catalogue.yaml")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise DataError(f"{_DATA_FILE.name}: {where} must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _product_type(row: Any, pools: dict[str, tuple[str, ...]], where: str) -> ProductType:
    if not isinstance(row, list) or len(row) != 6:
        raise DataError(
            f"{_DATA_FILE.name}: {where} must be [phrase, nouns, path, options, [lo, hi], styles]"
        )
    phrase, nouns, path, options, price, styles = row
    opts = tuple(tuple(o.split(":", 1)) for o in str(options).split())
    for opt in opts:
        if len(opt) != 2 or opt[1] not in pools:
            raise DataError(f"{_DATA_FILE.name}: {where}: option {':'.join(opt)!r} must be group:known_pool")
    lo, hi = (float(x) for x in price)
    return ProductType(
        phrase=str(phrase),
        nouns=tuple(str(nouns).split()),
        path=tuple(str(path).split(" > ")),
        options=tuple((g, p) for g, p in opts),
        price=(lo, hi),
        styles=_strings(styles, f"{where} styles"),
    )


def _load() -> tuple[dict[str, tuple[str, ...]], tuple[Category, ...]]:
    data = yaml.load(
        _DATA_FILE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    pools = {str(k): _strings(v, f"option pool {k!r}") for k, v in data["option_pools"].items()}
    categories = tuple(
        Category(
            name=str(c["name"]),
            root=str(c["root"]),
            brands=_strings(c["brands"], f"{c['name']} brands"),
            attributes=_strings(c["attributes"], f"{c['name']} attributes"),
            types=tuple(_product_type(row, pools, f"{c['name']} type {row!r}") for row in c["types"]),
        )
        for c in data["categories"]
    )
    return pools, categories


OPTION_POOLS, CATEGORIES = _load()

#: Neutral padding for bullets, descriptions and reviews (never an attribute of any category).
USE_CASES = ("everyday use", "home and travel", "busy mornings", "weekend plans", "gifting", "daily routines")
FILLER_BULLETS = (
    "SATISFACTION PROMISE: reach out to our team with any question about your order",
    "WHAT YOU GET: one {phrase} as pictured, packed with care",
    "THOUGHTFUL DETAILS: designed by {brand} to look good and work well",
    "A GREAT GIFT: a welcome choice for friends and family",
)
REVIEW_TEXTS = (
    (5, "love it", "exactly what i wanted and it arrived on time"),
    (5, "great value", "works as described, would buy again"),
    (4, "pretty good", "does the job, the packaging could be better"),
    (4, "nice", "looks like the pictures and feels sturdy enough"),
    (3, "okay", "it is fine for the price but nothing special"),
    (2, "not for me", "it did not match what i expected from the photos"),
    (1, "disappointed", "it stopped working after a couple of weeks"),
)
