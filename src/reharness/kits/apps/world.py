"""The simulated world of one ``apps`` task: ~100 people, the supervisor, and every app's SQLite tables.

A world is rebuilt deterministically from a small JSON-able spec (``{"seed": int, ...}`` plus what the
scenario planted), so a :class:`~reharness.envs.base.Task` stays small and an episode always starts from the
same database. All apps share one in-memory SQLite database per episode; user 1 is the supervisor (the
person the agent acts for). Dates are ISO strings; "today" is fixed per world.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from typing import Any

SUPERVISOR_ID = 1
N_PEOPLE = 100
APPS = ("notes", "todo", "payments", "email", "contacts", "calendar", "files")


def _words(text: str) -> list[str]:
    return text.split()


RELATIONSHIPS = ("friend", "coworker", "family", "roommate", "neighbor")

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, email TEXT UNIQUE, phone TEXT,
                    birthday TEXT);
CREATE TABLE accounts (user_id INTEGER, app TEXT, password TEXT, PRIMARY KEY (user_id, app));
CREATE TABLE notes (id INTEGER PRIMARY KEY, user_id INTEGER, title TEXT, content TEXT, created_at TEXT,
                    pinned INTEGER);
CREATE TABLE todos (id INTEGER PRIMARY KEY, user_id INTEGER, title TEXT, list_name TEXT, due_date TEXT,
                    done INTEGER, created_at TEXT);
CREATE TABLE wallets (user_id INTEGER PRIMARY KEY, initial_balance REAL);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, sender_id INTEGER, receiver_id INTEGER, amount REAL,
                           description TEXT, created_at TEXT);
CREATE TABLE payment_requests (id INTEGER PRIMARY KEY, requester_id INTEGER, payer_id INTEGER, amount REAL,
                               description TEXT, status TEXT, created_at TEXT);
CREATE TABLE emails (id INTEGER PRIMARY KEY, sender_id INTEGER, recipient_id INTEGER, subject TEXT,
                     body TEXT, sent_at TEXT);
CREATE TABLE contacts (id INTEGER PRIMARY KEY, owner_id INTEGER, first_name TEXT, last_name TEXT, email TEXT,
                       phone TEXT, birthday TEXT, relationship TEXT);
CREATE TABLE events (id INTEGER PRIMARY KEY, owner_id INTEGER, title TEXT, start_time TEXT, end_time TEXT,
                     location TEXT, attendee_emails TEXT);
CREATE TABLE files (id INTEGER PRIMARY KEY, owner_id INTEGER, path TEXT, content TEXT, created_at TEXT);
"""
#: Tables graded by the database diff (``accounts``, ``users`` and ``wallets`` are never changed by APIs).
TABLES = ("notes", "todos", "transactions", "payment_requests", "emails", "contacts", "events", "files")

FIRST = _words(
    """
    Ava Ben Cara Dan Eli Fay Gus Hana Ivan Jade Kai Lena Milo Nora Omar Pia Quinn Rosa Sam Tara Umar
    Vera Wade Xena Yara Zane Abel Bea Cole Dina Ezra Flor Gina Hugo Iris Joel Kira Liam Maya Nico
    """
)
LAST = _words(
    """
    Adams Baker Chen Diaz Evans Fox Garcia Hill Ito Jones Khan Lopez Moore Nagy Ortiz Park Quinn Reyes
    Silva Tanaka Usman Vogel Walsh Xu Young Zhou Novak Berg Costa Duval
    """
)
WORDS = _words(
    """
    apple budget cable dinner engine forest garden harbor island jacket kettle ladder market needle
    orange pepper quartz river saddle ticket umbrella velvet window yogurt zipper
    """
)
LOCATIONS = ("Room 101", "Cafe Luna", "Main Library", "Online", "Office 4B", "City Park")


def today_of(seed: int) -> dt.date:
    """The fixed current date of a world (a weekday in 2024)."""
    return dt.date(2024, 3, 1) + dt.timedelta(days=random.Random(seed).randrange(0, 240))


def _stamp(day: dt.date, rng: random.Random) -> str:
    return f"{day.isoformat()}T{rng.randrange(7, 22):02d}:{rng.randrange(0, 60):02d}:00"


_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789ABCDEFGHJKLMNPQRSTUV"  # 52 symbols, no look-alikes


def _password(rng: random.Random) -> str:
    """Ten characters from one 60-bit draw (a world makes 700 of them: one draw each keeps builds fast)."""
    bits, out = rng.getrandbits(60), []
    for _ in range(10):
        bits, digit = divmod(bits, len(_ALPHABET))
        out.append(_ALPHABET[digit])
    return "".join(out)


def make_people(rng: random.Random) -> list[dict[str, Any]]:
    """``N_PEOPLE`` distinct people; the first is the supervisor."""
    names = [(f, lst) for f in FIRST for lst in LAST]
    rng.shuffle(names)
    people = []
    for i, (first, last) in enumerate(names[:N_PEOPLE], start=1):
        birthday = dt.date(1960, 1, 1) + dt.timedelta(days=rng.randrange(0, 365 * 40))
        people.append(
            {
                "id": i,
                "first_name": first,
                "last_name": last,
                "email": f"{first.lower()}.{last.lower()}@example.com",
                "phone": f"+1-555-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}",
                "birthday": birthday.isoformat(),
            }
        )
    return people


class World:
    """One world's database plus the facts scenarios need (people, today)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.seed = int(spec["seed"])
        self.today = today_of(self.seed)
        rng = random.Random(self.seed)
        self.people = make_people(rng)
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.executescript(SCHEMA)
        self._fill(rng)
        self.plant(spec.get("plant") or {})

    def plant(self, plant: dict[str, list[dict[str, Any]]]) -> None:
        """Add a scenario's rows (after the base data, in order: ``World(spec)`` gives the same ids)."""
        for table, rows in plant.items():
            for row in rows:
                self.insert(table, row)
        self.db.commit()

    # ------------------------------------------------------------------ helpers
    @property
    def supervisor(self) -> dict[str, Any]:
        return self.people[SUPERVISOR_ID - 1]

    def person(self, pid: int) -> dict[str, Any]:
        return self.people[pid - 1]

    def insert(self, table: str, row: dict[str, Any]) -> int:
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        cur = self.db.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(row.values()))
        return int(cur.lastrowid or 0)

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def day(self, offset: int) -> dt.date:
        return self.today + dt.timedelta(days=offset)

    def snapshot(self) -> dict[str, dict[int, dict[str, Any]]]:
        """Every graded table as ``{id: row}`` (what the grader diffs)."""
        return {t: {r["id"]: r for r in self.rows(f"SELECT * FROM {t}")} for t in TABLES}

    # ------------------------------------------------------------------ base data
    def _fill(self, rng: random.Random) -> None:
        accounts, wallets = [], []
        for p in self.people:
            accounts += [(p["id"], app, _password(rng)) for app in APPS]
            start = 5000.0 if p["id"] == SUPERVISOR_ID else float(rng.randrange(200, 3000))
            wallets.append((p["id"], start))
        cols = ("id", "first_name", "last_name", "email", "phone", "birthday")
        self.db.executemany(
            f"INSERT INTO users VALUES ({', '.join('?' * len(cols))})",
            [tuple(p[c] for c in cols) for p in self.people],
        )
        self.db.executemany("INSERT INTO accounts VALUES (?, ?, ?)", accounts)
        self.db.executemany("INSERT INTO wallets VALUES (?, ?)", wallets)
        sup = SUPERVISOR_ID
        others = list(range(2, N_PEOPLE + 1))
        for pid in rng.sample(others, 30):
            p = self.person(pid)
            fields = {k: p[k] for k in ("first_name", "last_name", "email", "phone", "birthday")}
            self.insert("contacts", {"owner_id": sup, **fields, "relationship": rng.choice(RELATIONSHIPS)})
        for _ in range(rng.randrange(14, 24)):
            other = rng.choice(others)
            sender, receiver = (sup, other) if rng.random() < 0.5 else (other, sup)
            self.insert(
                "transactions",
                {
                    "sender_id": sender,
                    "receiver_id": receiver,
                    "amount": round(rng.uniform(5, 150), 2),
                    "description": rng.choice(WORDS),
                    "created_at": _stamp(self.day(-rng.randrange(1, 120)), rng),
                },
            )
        for _ in range(rng.randrange(12, 22)):
            self.insert(
                "emails",
                {
                    "sender_id": rng.choice(others),
                    "recipient_id": sup,
                    "subject": f"About the {rng.choice(WORDS)}",
                    "body": f"Hi {self.supervisor['first_name']}, a note about the {rng.choice(WORDS)}.",
                    "sent_at": _stamp(self.day(-rng.randrange(1, 90)), rng),
                },
            )
        for _ in range(rng.randrange(4, 9)):
            word = rng.choice(WORDS)
            self.insert(
                "notes",
                {
                    "user_id": sup,
                    "title": f"{word.title()} ideas",
                    "content": f"Remember the {word} and the {rng.choice(WORDS)}.",
                    "created_at": _stamp(self.day(-rng.randrange(1, 200)), rng),
                    "pinned": int(rng.random() < 0.2),
                },
            )
        for _ in range(rng.randrange(6, 14)):
            self.insert(
                "todos",
                {
                    "user_id": sup,
                    "title": f"Buy {rng.choice(WORDS)}",
                    "list_name": rng.choice(("inbox", "home", "work")),
                    "due_date": self.day(rng.randrange(-20, 30)).isoformat(),
                    "done": int(rng.random() < 0.3),
                    "created_at": _stamp(self.day(-rng.randrange(20, 60)), rng),
                },
            )
        for _ in range(rng.randrange(8, 16)):
            day = self.day(rng.randrange(-40, 60))
            hour = rng.randrange(8, 18)
            self.insert(
                "events",
                {
                    "owner_id": sup,
                    "title": f"{rng.choice(WORDS).title()} meeting",
                    "start_time": f"{day.isoformat()}T{hour:02d}:00:00",
                    "end_time": f"{day.isoformat()}T{hour + 1:02d}:00:00",
                    "location": rng.choice(LOCATIONS),
                    "attendee_emails": "[]",
                },
            )
        for i in range(rng.randrange(5, 10)):
            folder = rng.choice(("/documents", "/photos", "/music"))
            self.insert(
                "files",
                {
                    "owner_id": sup,
                    "path": f"{folder}/{rng.choice(WORDS)}_{i}.txt",
                    "content": f"{rng.choice(WORDS)} {rng.choice(WORDS)}",
                    "created_at": _stamp(self.day(-rng.randrange(1, 300)), rng),
                },
            )
