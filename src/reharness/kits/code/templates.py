"""Function templates of the generated packages: real behaviour, the bugs that can be injected, test inputs.

Each template draws names and constants from the rng and returns a :class:`Built`: the correct source of one
or two functions (plus module constants), the :class:`Mutation` sites where a bug of a given kind can be
injected (an exact text replacement; the generator keeps only sites that are unique in the module) and the
:class:`Case` inputs tests are written from. Expected values are never written here: the generator computes
them by running the correct code, and keeps as bug-revealing cases those where the buggy code differs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

BUG_KINDS = (
    "operator_swap",
    "off_by_one",
    "wrong_constant",
    "removed_branch",
    "wrong_default",
    "swapped_arguments",
    "wrong_exception",
)


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` by ``new`` (``old`` must occur once in the module) to inject a bug of ``kind``."""

    kind: str
    old: str
    new: str


@dataclass(frozen=True)
class Case:
    """One call ``fn(args)``; ``args`` is Python source (``"5, high=10"``)."""

    fn: str
    args: str


@dataclass
class Built:
    category: str
    functions: list[str]
    source: str
    constants: str = ""
    mutations: list[Mutation] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)


def _pick(rng: random.Random, *names: str) -> str:
    return rng.choice(names)


def _ints(rng: random.Random, n: int, lo: int = -20, hi: int = 60) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def clamp(rng: random.Random) -> Built:
    fn = _pick(rng, "clamp", "bound", "limit_value", "fit_range")
    lo, hi = rng.randint(-5, 5), rng.randint(20, 120)
    src = f'''def {fn}(value, low={lo}, high={hi}):
    """Limit value to the range [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value
'''
    muts = [
        Mutation("operator_swap", "    if value < low:", "    if value > low:"),
        Mutation("wrong_default", f"high={hi})", f"high={hi + rng.choice((-10, 10, 50))})"),
        Mutation("removed_branch", "    if value > high:\n        return high\n", ""),
    ]
    cases = [Case(fn, f"{v}") for v in (lo - 3, lo + 1, hi - 1, hi + 7, hi + 60, lo - 40)]
    cases += [Case(fn, f"{rng.randint(0, 9)}, low=2, high=7"), Case(fn, "100, high=150")]
    return Built("numbers", [fn], src, mutations=muts, cases=cases)


def windows(rng: random.Random) -> Built:
    fn = _pick(rng, "window_sums", "rolling_totals", "run_sums")
    src = f'''def {fn}(items, size):
    """Sums of every run of size consecutive items."""
    if size <= 0:
        raise ValueError("size must be positive")
    return [sum(items[i:i + size]) for i in range(len(items) - size + 1)]
'''
    muts = [
        Mutation("off_by_one", "range(len(items) - size + 1)", "range(len(items) - size)"),
        Mutation(
            "wrong_exception", 'raise ValueError("size must be positive")', 'raise TypeError("bad size")'
        ),
        Mutation("operator_swap", "    if size <= 0:", "    if size < 0:"),
    ]
    cases = [Case(fn, f"{_ints(rng, n)}, {k}") for n, k in ((5, 2), (6, 3), (4, 4), (3, 1))]
    cases += [Case(fn, "[1, 2, 3], 0"), Case(fn, "[], 2")]
    return Built("numbers", [fn], src, mutations=muts, cases=cases)


def chunks(rng: random.Random) -> Built:
    fn = _pick(rng, "chunk", "batches", "split_every")
    src = f'''def {fn}(items, n):
    """Split items into lists of n items (the last one may be shorter)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return [items[i:i + n] for i in range(0, len(items), n)]
'''
    muts = [
        Mutation("off_by_one", "items[i:i + n]", "items[i:i + n - 1]"),
        Mutation("off_by_one", "range(0, len(items), n)", "range(0, len(items) - 1, n)"),
        Mutation("wrong_exception", 'raise ValueError("n must be at least 1")', 'raise IndexError("bad n")'),
    ]
    cases = [Case(fn, f"{list(range(m))}, {k}") for m, k in ((7, 3), (6, 2), (5, 5), (4, 1))]
    cases += [Case(fn, "[1, 2], 0"), Case(fn, "[], 3")]
    return Built("numbers", [fn], src, mutations=muts, cases=cases)


def median(rng: random.Random) -> Built:
    fn = _pick(rng, "median", "middle_value", "midpoint")
    src = f'''def {fn}(values):
    """The median of values."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return (ordered[mid - 1] + ordered[mid]) / 2
    return ordered[mid]
'''
    muts = [
        Mutation("off_by_one", "(ordered[mid - 1] + ordered[mid])", "(ordered[mid] + ordered[mid + 1])"),
        Mutation(
            "removed_branch",
            "    if len(ordered) % 2 == 0:\n        return (ordered[mid - 1] + ordered[mid]) / 2\n",
            "",
        ),
        Mutation("wrong_exception", 'raise ValueError("median of an empty list")', 'raise KeyError("empty")'),
    ]
    cases = [Case(fn, str(_ints(rng, n))) for n in (1, 3, 4, 5, 6)] + [Case(fn, "[]")]
    return Built("stats", [fn], src, mutations=muts, cases=cases)


def top_mean(rng: random.Random) -> Built:
    fn = _pick(rng, "top_mean", "best_average", "mean_of_best")
    k = rng.randint(2, 4)
    src = f'''def {fn}(values, k={k}):
    """The mean of the k largest values (of all of them when there are fewer)."""
    if not values:
        raise ValueError("no values")
    top = sorted(values, reverse=True)[:k]
    return round(sum(top) / len(top), 2)
'''
    muts = [
        Mutation("wrong_default", f"k={k})", f"k={k + 1})"),
        Mutation("wrong_constant", "reverse=True", "reverse=False"),
        Mutation("wrong_exception", 'raise ValueError("no values")', 'raise ZeroDivisionError("no values")'),
    ]
    cases = [Case(fn, str(_ints(rng, n, 0, 100))) for n in (k + 2, k + 3, k, 1)]
    cases += [Case(fn, f"{_ints(rng, 6, 0, 100)}, k=1"), Case(fn, "[]")]
    return Built("stats", [fn], src, mutations=muts, cases=cases)


def discount(rng: random.Random) -> Built:
    fn = _pick(rng, "order_total", "bulk_price", "invoice_total")
    const = _pick(rng, "BULK_DISCOUNT", "VOLUME_RATE", "DISCOUNT_RATE")
    rate, threshold = rng.choice((0.1, 0.2, 0.25, 0.15)), rng.randint(5, 12)
    other = rng.choice([r for r in (0.05, 0.3, 0.5, 0.35) if r != rate])
    constants = f"{const} = {rate}\n"
    src = f'''def {fn}(price, quantity=1):
    """Total price; orders of {threshold} or more units get the {const} off."""
    total = price * quantity
    if quantity >= {threshold}:
        total = total * (1 - {const})
    return round(total, 2)
'''
    muts = [
        Mutation("wrong_constant", f"{const} = {rate}\n", f"{const} = {other}\n"),
        Mutation("operator_swap", f"if quantity >= {threshold}:", f"if quantity > {threshold}:"),
        Mutation("operator_swap", f"(1 - {const})", f"(1 + {const})"),
        Mutation("wrong_default", "quantity=1)", "quantity=2)"),
        Mutation(
            "removed_branch", f"    if quantity >= {threshold}:\n        total = total * (1 - {const})\n", ""
        ),
    ]
    price = rng.randint(3, 40)
    cases = [Case(fn, f"{price}, {q}") for q in (1, 3, threshold - 1, threshold, threshold + 4)]
    cases += [Case(fn, f"{rng.randint(2, 99)}")]
    return Built("money", [fn], src, constants=constants, mutations=muts, cases=cases)


def percent(rng: random.Random) -> Built:
    ratio = _pick(rng, "ratio", "fraction", "share")
    pct = _pick(rng, "percent", "as_percent", "percentage")
    src = f'''def {ratio}(part, whole):
    """part / whole; whole must not be zero."""
    if whole == 0:
        raise ZeroDivisionError("whole must not be zero")
    return part / whole


def {pct}(part, whole, digits=1):
    """part as a percentage of whole, rounded to digits."""
    return round(100 * {ratio}(part, whole), digits)
'''
    muts = [
        Mutation("swapped_arguments", f"{ratio}(part, whole), digits", f"{ratio}(whole, part), digits"),
        Mutation("wrong_exception", "raise ZeroDivisionError(", "raise ValueError("),
        Mutation("wrong_default", "digits=1)", "digits=0)"),
    ]
    cases = [Case(pct, f"{a}, {b}") for a, b in ((1, 8), (3, 7), (5, 20), (rng.randint(1, 9), 13))]
    cases += [Case(ratio, f"{rng.randint(1, 9)}, 4"), Case(ratio, "3, 0"), Case(pct, "2, 3, digits=3")]
    return Built("money", [ratio, pct], src, mutations=muts, cases=cases)


def growth(rng: random.Random) -> Built:
    grow = _pick(rng, "compound", "grow", "future_value")
    gain = _pick(rng, "gain", "interest_earned", "profit")
    src = f'''def {grow}(amount, rate, years):
    """amount after years of yearly compound growth at rate."""
    if years < 0:
        raise ValueError("years must not be negative")
    for _ in range(years):
        amount = amount * (1 + rate)
    return round(amount, 2)


def {gain}(amount, rate, years):
    """What amount gains over years at rate."""
    return round({grow}(amount, rate, years) - amount, 2)
'''
    muts = [
        Mutation(
            "swapped_arguments",
            f"{grow}(amount, rate, years) - amount",
            f"{grow}(amount, years, rate) - amount",
        ),
        Mutation("off_by_one", "range(years)", "range(years - 1)"),
        Mutation(
            "wrong_exception", 'raise ValueError("years must not be negative")', 'raise TypeError("years")'
        ),
    ]
    amount = rng.choice((100, 250, 1000, 80))
    cases = [Case(grow, f"{amount}, 0.1, {y}") for y in (0, 1, 3)] + [Case(grow, f"{amount}, 0.05, -1")]
    cases += [Case(gain, f"{amount}, 0.2, 2"), Case(gain, f"{amount}, 0.1, 1")]
    return Built("money", [grow, gain], src, mutations=muts, cases=cases)


def parse_pairs(rng: random.Random) -> Built:
    fn = _pick(rng, "parse_pairs", "parse_settings", "read_fields")
    sep, other = rng.choice(((":", "="), ("=", ":")))
    src = f'''def {fn}(text, sep="{sep}"):
    """Parse comma-separated 'key{sep}value' pairs into a dict; blank entries are skipped."""
    result = {{}}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if sep not in part:
            raise ValueError(f"missing {{sep!r}} in {{part!r}}")
        key, value = part.split(sep, 1)
        result[key.strip()] = value.strip()
    return result
'''
    muts = [
        Mutation("wrong_default", f'sep="{sep}")', f'sep="{other}")'),
        Mutation("removed_branch", "        if not part:\n            continue\n", ""),
        Mutation("wrong_exception", "raise ValueError(f", "raise KeyError(f"),
    ]
    words = ["alpha", "beta", "size", "mode", "name", "color", "level"]
    a, b, c = rng.sample(words, 3)
    cases = [
        Case(fn, repr(f"{a}{sep}1, {b}{sep}two")),
        Case(fn, repr(f"{a}{sep}x,, {c}{sep} 3 ")),
        Case(fn, repr(f"{b}{sep}on")),
        Case(fn, repr(f"{a} 1")),
        Case(fn, repr(f"{a}{other}1") + f", sep={other!r}"),
    ]
    return Built("text", [fn], src, mutations=muts, cases=cases)


def count_words(rng: random.Random) -> Built:
    fn = _pick(rng, "count_words", "long_words", "word_count")
    m = rng.randint(3, 5)
    src = f'''def {fn}(text, min_length={m}):
    """How many words of text have at least min_length characters."""
    return sum(1 for word in text.split() if len(word) >= min_length)
'''
    muts = [
        Mutation("operator_swap", "len(word) >= min_length", "len(word) > min_length"),
        Mutation("wrong_default", f"min_length={m})", f"min_length={m + 2})"),
        Mutation("off_by_one", "len(word) >= min_length", "len(word) >= min_length + 1"),
    ]
    words = ["a", "an", "the", "cat", "tree", "house", "rivers", "mountain", "sky", "road", "lamp", "go"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) for _ in range(3)]
    cases = [Case(fn, repr(t)) for t in texts] + [Case(fn, repr("x" * m + " " + "y" * (m + 1)))]
    cases += [Case(fn, repr(texts[0]) + ", min_length=1"), Case(fn, "''")]
    return Built("text", [fn], src, mutations=muts, cases=cases)


def slug(rng: random.Random) -> Built:
    fn = _pick(rng, "slug", "username", "handle")
    length = rng.randint(8, 14)
    src = f'''def {fn}(name, max_length={length}):
    """Lower-case name with spaces as underscores, cut to max_length; blank names are rejected."""
    name = name.strip()
    if not name:
        raise ValueError("empty name")
    name = name.lower().replace(" ", "_")
    return name[:max_length]
'''
    muts = [
        Mutation("removed_branch", '    if not name:\n        raise ValueError("empty name")\n', ""),
        Mutation("wrong_default", f"max_length={length})", f"max_length={length - 3})"),
        Mutation("wrong_exception", 'raise ValueError("empty name")', 'raise AttributeError("empty name")'),
        Mutation("off_by_one", "name[:max_length]", "name[:max_length - 1]"),
    ]
    names = ["Ada Lovelace", "grace  hopper", "Alan Mathison Turing", " Kay ", "Edsger W Dijkstra"]
    cases = [Case(fn, repr(n)) for n in rng.sample(names, 4)] + [Case(fn, "'   '"), Case(fn, "'Bo Li', 3")]
    return Built("text", [fn], src, mutations=muts, cases=cases)


def leap(rng: random.Random) -> Built:
    fn = _pick(rng, "is_leap", "leap_year", "has_feb_29")
    src = f'''def {fn}(year):
    """Whether year is a Gregorian leap year."""
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0
'''
    muts = [
        Mutation("removed_branch", "    if year % 400 == 0:\n        return True\n", ""),
        Mutation("wrong_constant", "year % 400 == 0", "year % 300 == 0"),
        Mutation("operator_swap", "return year % 4 == 0", "return year % 4 != 0"),
    ]
    years = [
        rng.choice((1996, 2024, 2012)),
        rng.choice((2019, 2023, 2021)),
        1900,
        2000,
        rng.choice((1600, 2400)),
    ]
    cases = [Case(fn, str(y)) for y in years] + [Case(fn, "2100")]
    return Built("dates", [fn], src, mutations=muts, cases=cases)


def grade(rng: random.Random) -> Built:
    fn = _pick(rng, "letter_grade", "grade", "rating")
    a, b, c = rng.randint(85, 92), rng.randint(72, 80), rng.randint(55, 65)
    src = f'''def {fn}(score):
    """The letter for a score between 0 and 100."""
    if score < 0 or score > 100:
        raise ValueError(f"score out of range: {{score}}")
    if score >= {a}:
        return "A"
    if score >= {b}:
        return "B"
    if score >= {c}:
        return "C"
    return "F"
'''
    muts = [
        Mutation("wrong_constant", f"if score >= {a}:", f"if score >= {a + 5}:"),
        Mutation("operator_swap", f"if score >= {b}:", f"if score > {b}:"),
        Mutation("removed_branch", f'    if score >= {c}:\n        return "C"\n', ""),
        Mutation("wrong_exception", "raise ValueError(f", "raise IndexError(f"),
    ]
    cases = [Case(fn, str(s)) for s in (100, a, a + 2, b, b + 1, c, c + 3, c - 1, 0)] + [Case(fn, "101")]
    return Built("grades", [fn], src, mutations=muts, cases=cases)


TEMPLATES: dict[str, Callable[[random.Random], Built]] = {
    f.__name__: f
    for f in (
        clamp,
        windows,
        chunks,
        median,
        top_mean,
        discount,
        percent,
        growth,
        parse_pairs,
        count_words,
        slug,
        leap,
        grade,
    )
}
