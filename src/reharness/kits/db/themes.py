"""Seeded Wikipedia-like tables for generated DBBench tasks (league tables, elections, films, countries …).

Every column is TEXT, as in DBBench: numbers carry thousands commas (``'12,345'``), percents (``'45.2%'``) and
currency (``'$1,234,567'``); dates read ``'March 19, 1998'``; names carry accents. Each theme returns a
:class:`GenTable` with one more row than the table shows (``spare``), used as the row to INSERT and as a
source of fresh values for UPDATE tasks. Column ``kinds`` tell the question builders what each column holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from reharness.kits.db import vocab
from reharness.kits.db.functions import fold

NUMERIC_KINDS = ("int", "comma", "percent", "money", "decimal")


@dataclass
class GenTable:
    """A generated table plus what the question builders need to know about it."""

    theme: str
    name: str
    columns: list[str]
    kinds: list[str]  # key | text | cat | date | int | comma | percent | money | decimal
    rows: list[list[str]]
    spare: list[str]
    noun: str
    plural: str

    @property
    def key(self) -> int:
        return self.kinds.index("key")

    def numeric(self, value: str) -> float:
        return float(value.replace("$", "").replace(",", "").replace("%", ""))

    def distinct_numeric(self) -> list[int]:
        """Numeric columns whose values are pairwise different (safe for ranking questions)."""
        out = []
        for i, kind in enumerate(self.kinds):
            if kind in NUMERIC_KINDS:
                values = [self.numeric(r[i]) for r in self.rows]
                if len(set(values)) == len(values):
                    out.append(i)
        return out

    def categorical(self) -> list[int]:
        """Columns with repeated values (for counting and grouped aggregates)."""
        out = []
        for i, kind in enumerate(self.kinds):
            if kind == "cat":
                values = [fold(r[i]) for r in self.rows]
                if len(set(values)) < len(values):
                    out.append(i)
        return out


def _comma(n: int) -> str:
    return f"{n:,}"


def _date(rng: random.Random, year: int) -> str:
    return f"{rng.choice(vocab.MONTHS)} {rng.randint(1, 28)}, {year}"


def _people(rng: random.Random, n: int) -> list[str]:
    names: dict[str, str] = {}
    while len(names) < n:
        name = f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}"
        names.setdefault(fold(name), name)
    return list(names.values())


def _sample(rng: random.Random, pool: tuple[str, ...], n: int) -> list[str]:
    return rng.sample(list(pool), n)


def _distinct(rng: random.Random, lo: int, hi: int, n: int) -> list[int]:
    return rng.sample(range(lo, hi), n)


def league(rng: random.Random, n: int) -> GenTable:
    clubs = _sample(rng, vocab.CLUBS, n + 1)
    year = rng.randint(1975, 2019)
    points = sorted(_distinct(rng, 18, 95, n + 1), reverse=True)
    crowds = _distinct(rng, 4_000, 80_000, n + 1)
    played = rng.choice((30, 34, 38))
    rows = []
    for i in range(n + 1):
        won = min(points[i] // 3, played)
        drawn = min(points[i] - 3 * won, played - won)
        lost = played - won - drawn
        rows.append(
            [
                str(i + 1),
                clubs[i],
                str(played),
                str(won),
                str(drawn),
                str(lost),
                str(points[i]),
                _comma(crowds[i]),
                rng.choice(("Promoted", "Relegated", "Mid-table", "Mid-table", "Champions League")),
            ]
        )
    spare = rows.pop(rng.randrange(len(rows)))
    name = f"{rng.choice(vocab.LEAGUES)} {year}–{(year + 1) % 100:02d} standings"
    cols = ["Position", "Club", "Played", "Won", "Drawn", "Lost", "Points", "Average attendance", "Notes"]
    kinds = ["int", "key", "cat", "int", "int", "int", "int", "comma", "cat"]
    return GenTable("league", name, cols, kinds, rows, spare, "club", "clubs")


def elections(rng: random.Random, n: int) -> GenTable:
    state = rng.choice(vocab.STATES)
    people = _people(rng, n + 1)
    votes = _distinct(rng, 40_000, 400_000, n + 1)
    shares = _distinct(rng, 301, 899, n + 1)
    rows = [
        [
            f"{state} {i + 1}",
            people[i],
            rng.choice(vocab.PARTIES[:3]),
            str(rng.randint(1960, 2010)),
            _comma(votes[i]),
            f"{shares[i] / 10:.1f}%",
            rng.choice(vocab.RESULTS),
        ]
        for i in range(n + 1)
    ]
    spare = rows.pop(rng.randrange(len(rows)))
    year = rng.randint(1980, 2020)
    name = rng.choice(
        (f"United States House elections in {state}, {year}", f"{state} congressional results {year}")
    )
    cols = ["District", "Incumbent", "Party", "First elected", "Votes", "Vote share", "Result"]
    kinds = ["text", "key", "cat", "int", "comma", "percent", "cat"]
    return GenTable("elections", name, cols, kinds, rows, spare, "incumbent", "incumbents")


def films(rng: random.Random, n: int) -> GenTable:
    titles: dict[str, str] = {}
    while len(titles) < n + 1:
        title = f"{rng.choice(vocab.TITLE_WORDS_A)} {rng.choice(vocab.TITLE_WORDS_B)}"
        titles.setdefault(fold(title), title)
    directors = _people(rng, 4)
    gross = _distinct(rng, 500_000, 450_000_000, n + 1)
    runtimes = _distinct(rng, 81, 189, n + 1)
    rows = []
    for i, title in enumerate(titles.values()):
        year = rng.randint(1985, 2022)
        rows.append(
            [
                title,
                str(year),
                rng.choice(directors),
                rng.choice(vocab.STUDIOS),
                f"${_comma(gross[i])}",
                str(runtimes[i]),
                _date(rng, year),
            ]
        )
    spare = rows.pop(rng.randrange(len(rows)))
    name = rng.choice(("Box office results", "Film releases and gross", "Studio film slate"))
    cols = ["Title", "Year", "Director", "Studio", "Gross", "Running time (min)", "Release date"]
    kinds = ["key", "int", "cat", "cat", "money", "int", "date"]
    return GenTable("films", name, cols, kinds, rows, spare, "film", "films")


def countries(rng: random.Random, n: int) -> GenTable:
    picked = rng.sample(list(vocab.COUNTRIES), n + 1)
    population = _distinct(rng, 150_000, 220_000_000, n + 1)
    area = _distinct(rng, 400, 2_500_000, n + 1)
    growth = _distinct(rng, -30, 95, n + 1)
    rows = [
        [c, capital, region, _comma(population[i]), _comma(area[i]), f"{growth[i] / 10:.1f}%"]
        for i, (c, capital, region) in enumerate(picked)
    ]
    spare = rows.pop(rng.randrange(len(rows)))
    name = rng.choice(("Countries by population", "List of sovereign states", "Country statistics"))
    cols = ["Country", "Capital", "Region", "Population", "Area (km²)", "GDP growth"]
    kinds = ["key", "text", "cat", "comma", "comma", "percent"]
    return GenTable("countries", name, cols, kinds, rows, spare, "country", "countries")


def ambassadors(rng: random.Random, n: int) -> GenTable:
    host = rng.choice(vocab.COUNTRIES)[0]
    people = _people(rng, n + 1)
    years = sorted(rng.sample(range(1885, 1995), n + 1))
    rows = []
    for i in range(n + 1):
        start, end = years[i], years[i] + rng.randint(1, 6)
        president = vocab.PRESIDENTS[min((start - 1885) // 11, len(vocab.PRESIDENTS) - 1)]
        rows.append(
            [people[i], rng.choice(vocab.ENVOY_TITLES), _date(rng, start), _date(rng, end), president]
        )
    spare = rows.pop(rng.randrange(len(rows)))
    name = f"US Ambassadors to {host}"
    cols = [
        "Representative",
        "Title",
        "Presentation of Credentials",
        "Termination of Mission",
        "Appointed by",
    ]
    kinds = ["key", "cat", "date", "date", "cat"]
    return GenTable("ambassadors", name, cols, kinds, rows, spare, "representative", "representatives")


def races(rng: random.Random, n: int) -> GenTable:
    drivers = _people(rng, n + 1)
    grid = _distinct(rng, 1, 27, n + 1)
    total = rng.randint(55, 78)
    rows = []
    for i in range(n + 1):
        laps = total if i < n // 2 + 1 else rng.randint(5, total - 1)
        time = (
            f"+{rng.randint(1, 90)}.{rng.randint(0, 999):03d}"
            if laps == total
            else rng.choice(vocab.RETIREMENTS)
        )
        if i == 0:
            time = f"1:{rng.randint(28, 59)}:{rng.randint(10, 59)}.{rng.randint(0, 999):03d}"
        points = (10, 6, 4, 3, 2, 1)[i] if i < 6 else 0
        rows.append(
            [
                str(i + 1),
                drivers[i],
                rng.choice(vocab.CONSTRUCTORS),
                str(laps),
                time,
                str(grid[i]),
                str(points),
            ]
        )
    spare = rows.pop(rng.randrange(len(rows)))
    name = f"{rng.randint(1978, 2009)} {rng.choice(vocab.GRANDS_PRIX)} results"
    cols = ["Pos", "Driver", "Constructor", "Laps", "Time/Retired", "Grid", "Points"]
    kinds = ["int", "key", "cat", "int", "text", "int", "int"]
    return GenTable("races", name, cols, kinds, rows, spare, "driver", "drivers")


def medals(rng: random.Random, n: int) -> GenTable:
    nations = [c[0] for c in rng.sample(list(vocab.COUNTRIES), n + 1)]
    totals = sorted(_distinct(rng, 1, 60, n + 1), reverse=True)
    rows = []
    for i in range(n + 1):
        gold = rng.randint(0, totals[i])
        silver = rng.randint(0, totals[i] - gold)
        rows.append(
            [str(i + 1), nations[i], str(gold), str(silver), str(totals[i] - gold - silver), str(totals[i])]
        )
    spare = rows.pop(rng.randrange(len(rows)))
    name = f"{rng.randint(1951, 2019)} {rng.choice(vocab.GAMES)} medal table"
    cols = ["Rank", "Nation", "Gold", "Silver", "Bronze", "Total"]
    kinds = ["int", "key", "int", "int", "int", "int"]
    return GenTable("medals", name, cols, kinds, rows, spare, "nation", "nations")


THEMES: dict[str, Callable[[random.Random, int], GenTable]] = {
    "league": league,
    "elections": elections,
    "films": films,
    "countries": countries,
    "ambassadors": ambassadors,
    "races": races,
    "medals": medals,
}


def make_table(rng: random.Random) -> GenTable:
    """Draw a theme and a table of 8–15 rows."""
    theme = rng.choice(sorted(THEMES))
    return THEMES[theme](rng, rng.randint(8, 15))
