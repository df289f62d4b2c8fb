"""BM25 product search over the generated catalogue (WebShop searches its catalogue with BM25 via pyserini).

Each product is indexed as the tokens of its title, attributes and description with ``rank_bm25.BM25Okapi``.
A search returns the ids of at most 50 products with a positive score, best first; ties are broken by
catalogue order so results never depend on sort stability. The index and the results of each distinct query
are cached per process. A query counts its first :data:`MAX_QUERY_TOKENS` words only: scoring costs one pass
over the catalogue per word (0.2 ms), so an agent's 40,000-word query would take 9 s; WebShop queries are a
few words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rank_bm25 import BM25Okapi

from reharness.kits.shop.catalogue import Product, build_catalogue

MAX_HITS = 50
MAX_QUERY_TOKENS = 64
RESULTS_PER_PAGE = 10

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_STOPWORD_TEXT = (
    "a an and am are as at be by for from i in is it its looking me my need of on or that the this to want "
    "with find buy get some"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stopwords (keeps '6.76' and "l'eau" whole)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def document_tokens(product: Product) -> list[str]:
    return tokenize(" ".join((product.title, " ".join(product.attributes), product.description)))


class SearchIndex:
    """BM25 index over a fixed list of products."""

    def __init__(self, products: tuple[Product, ...]) -> None:
        self.products = products
        self._bm25 = BM25Okapi([document_tokens(p) for p in products])

    def search(self, query: str, limit: int = MAX_HITS) -> list[str]:
        """Product ids of the best ``limit`` matches of ``query`` (positive score only), best first."""
        tokens = tokenize(query)
        if not tokens:
            return []
        scores = self._bm25.get_scores(tokens)
        ranked = sorted(
            (i for i in range(len(self.products)) if scores[i] > 0), key=lambda i: (-scores[i], i)
        )
        return [self.products[i].asin for i in ranked[:limit]]


@lru_cache(maxsize=1)
def get_index() -> SearchIndex:
    """The index of the default catalogue (built once per process)."""
    return SearchIndex(build_catalogue().products)


@lru_cache(maxsize=4096)
def _cached_search(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(get_index().search(" ".join(tokens)))


def search_products(query: str) -> tuple[str, ...]:
    """Search the default catalogue by the query's first words (cached per distinct token sequence)."""
    return _cached_search(tuple(tokenize(query)[:MAX_QUERY_TOKENS]))
