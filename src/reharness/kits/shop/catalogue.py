"""The generated product catalogue of the shop environment (WebShop's scraped catalogue is not obtainable).

``build_catalogue()`` draws about 1,200 products over 12 categories from one fixed seed, in well under a
second, and caches the result per process. Every product type gets 9 to 13 products from different brands;
they draw their attributes from one shared pool of 6 per type and differ in attributes, option values and
prices, so a goal ("a long lasting lipstick in ruby red under $30") usually matches several similar products
of which only some satisfy every constraint: the agent has to read item pages and choose options. Products
are plain frozen dataclasses; ids look like lowercase ASINs (``b0`` + 8 characters).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from reharness.kits.shop.vocab import (
    CATEGORIES,
    FILLER_BULLETS,
    OPTION_POOLS,
    REVIEW_TEXTS,
    USE_CASES,
    Category,
    ProductType,
)

CATALOGUE_SEED = 20_240_601
_ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
_PRODUCTS_PER_TYPE = (9, 13)
_ATTRIBUTES_PER_TYPE = 6


@dataclass(frozen=True)
class Review:
    title: str
    score: int
    body: str


@dataclass(frozen=True)
class Product:
    """One catalogue entry; ``options`` keeps the page order of the option groups."""

    asin: str
    category: str
    path: tuple[str, ...]  # breadcrumb, root first (WebShop's product_category split on '›')
    query: str  # the product-type phrase the product was "scraped" for (WebShop's product query)
    nouns: tuple[str, ...]  # noun words of the name: brand words + type nouns (WebShop tags them with spaCy)
    brand: str
    title: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: float
    rating: float
    bullets: tuple[str, ...]
    description: str
    reviews: tuple[Review, ...]

    def option_group_of(self, value: str) -> str | None:
        """The option group offering ``value`` (lowercase), or ``None``."""
        for group, values in self.options:
            if value in values:
                return group
        return None

    def option_values(self) -> list[str]:
        return [v for _, values in self.options for v in values]


@dataclass(frozen=True)
class Catalogue:
    products: tuple[Product, ...]
    by_asin: dict[str, Product]

    def __len__(self) -> int:
        return len(self.products)

    def get(self, asin: str) -> Product:
        return self.by_asin[asin]


def _title_case(text: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in text.split())


def _new_asin(rng: random.Random, taken: set[str]) -> str:
    while True:
        asin = "b0" + "".join(rng.choice(_ID_CHARS) for _ in range(8))
        if asin not in taken:
            taken.add(asin)
            return asin


def _options(rng: random.Random, ptype: ProductType) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for group, pool_name in ptype.options:
        pool = OPTION_POOLS[pool_name]
        k = rng.randint(min(2, len(pool)), min(4, len(pool)))
        chosen = set(rng.sample(range(len(pool)), k))
        out.append((group, tuple(pool[i] for i in range(len(pool)) if i in chosen)))
    return tuple(out)


def _price(rng: random.Random, ptype: ProductType) -> float:
    lo, hi = ptype.price
    return max(0.99, round(rng.uniform(lo, hi)) - rng.choice((0.01, 0.05, 0.51)))


def _texts(
    rng: random.Random, cat: Category, ptype: ProductType, brand: str, style: str, attrs: tuple[str, ...]
) -> tuple[str, tuple[str, ...], str]:
    """Title, bullets and description; they mention this product's attributes and no other attribute."""
    head = f"{_title_case(brand)} {_title_case(style)} {_title_case(ptype.phrase)}"
    title = head + (" - " + ", ".join(_title_case(a) for a in attrs[:2]) if attrs else "")
    bullets = [f"{a.upper()}: a {ptype.phrase} you can count on, checked by the {brand} team" for a in attrs]
    bullets += [
        b.format(phrase=ptype.phrase, brand=_title_case(brand))
        for b in rng.sample(FILLER_BULLETS, rng.randint(1, 2))
    ]
    use = rng.choice(USE_CASES)
    described = ", ".join(attrs[:-1]) + (" and " if len(attrs) > 1 else "") + attrs[-1]
    description = (
        f"The {_title_case(brand)} {style} {ptype.phrase} is made for {use}. It is {described}. "
        f"Part of the {cat.root} collection by {_title_case(brand)}."
    )
    return title, tuple(bullets), description


def _reviews(rng: random.Random) -> tuple[Review, ...]:
    picked = rng.sample(REVIEW_TEXTS, rng.randint(1, 3))
    return tuple(Review(title, score, body) for score, title, body in picked)


def _product(
    rng: random.Random, cat: Category, ptype: ProductType, brand: str, pool: list[str], taken: set[str]
) -> Product:
    attrs = tuple(rng.sample(pool, rng.randint(2, 4)))
    style = rng.choice(ptype.styles)
    title, bullets, description = _texts(rng, cat, ptype, brand, style, attrs)
    return Product(
        asin=_new_asin(rng, taken),
        category=cat.name,
        path=(cat.root, *ptype.path),
        query=ptype.phrase,
        nouns=tuple(brand.replace("&", " ").split()) + ptype.nouns,
        brand=brand,
        title=title,
        attributes=attrs,
        options=_options(rng, ptype),
        price=_price(rng, ptype),
        rating=round(rng.uniform(2.5, 5.0), 1),
        bullets=bullets,
        description=description,
        reviews=_reviews(rng),
    )


@lru_cache(maxsize=4)
def build_catalogue(seed: int = CATALOGUE_SEED) -> Catalogue:
    """Generate the catalogue deterministically from ``seed`` (cached: built once per process)."""
    rng = random.Random(seed)
    taken: set[str] = set()
    products: list[Product] = []
    for cat in CATEGORIES:
        for ptype in cat.types:
            count = rng.randint(*_PRODUCTS_PER_TYPE)
            pool = rng.sample(
                cat.attributes, _ATTRIBUTES_PER_TYPE
            )  # shared, so products of a type look alike
            for i in range(count):
                brand = cat.brands[i] if i < len(cat.brands) else rng.choice(cat.brands)
                products.append(_product(rng, cat, ptype, brand, pool, taken))
    return Catalogue(tuple(products), {p.asin: p for p in products})
