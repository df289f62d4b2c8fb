"""Building blocks of ``apps`` scenarios: the :class:`Draft` a template returns, the ground-truth programs'
shared prelude (log in through the supervisor's passwords, page through list APIs) and world lookups.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.kits.apps.world import World

PRELUDE = """profile = apis.supervisor.show_profile()
passwords = {a["account_name"]: a["password"] for a in apis.supervisor.show_account_passwords()}
def token(app):
    return getattr(apis, app).login(username=profile["email"], password=passwords[app])["access_token"]
def fetch(api, **kwargs):
    items, page = [], 0
    while True:
        batch = api(page_index=page, page_limit=20, **kwargs)
        items += batch
        if len(batch) < 20:
            return items
        page += 1
"""


@dataclass
class Draft:
    """One task variant before its gold is computed."""

    instruction: str
    apps: tuple[str, ...]
    code: str
    expect: Callable[[World], tuple[Any, list[dict[str, Any]]]]
    plant: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def contact(rng: random.Random, world: World, relationship: str | None = None) -> dict[str, Any]:
    sql = "SELECT * FROM contacts WHERE owner_id = 1" + (" AND relationship = ?" if relationship else "")
    rows = world.rows(sql + " ORDER BY id", (relationship,) if relationship else ())
    return rng.choice(rows)


def uid(world: World, email: str) -> int:
    return int(world.rows("SELECT id FROM users WHERE email = ?", (email,))[0]["id"])


def stamp(world: World, offset: int, rng: random.Random) -> str:
    return f"{world.day(offset).isoformat()}T{rng.randrange(8, 20):02d}:{rng.randrange(60):02d}:00"
