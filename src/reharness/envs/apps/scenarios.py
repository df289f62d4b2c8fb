"""Task scenarios of ``apps``: each plants what it needs in a world, states the instruction, and derives the
gold (answer and expected database changes) from the resulting world, plus a ground-truth program.

A scenario template is a function ``(rng, world) -> Draft``; ``world`` is the base world of the variant. Its
``plant`` rows are added to the world spec (so they exist when the episode starts), and ``expect(world)``
computes the gold on the planted world. The programs use only the public APIs, with pagination and the
lookups a careful agent would do, and end with ``apis.supervisor.complete_task``.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.envs.apps.world import SUPERVISOR_ID, WORDS, World

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


def _contact(rng: random.Random, world: World, relationship: str | None = None) -> dict[str, Any]:
    sql = "SELECT * FROM contacts WHERE owner_id = 1" + (" AND relationship = ?" if relationship else "")
    rows = world.rows(sql + " ORDER BY id", (relationship,) if relationship else ())
    return rng.choice(rows)


def _uid(world: World, email: str) -> int:
    return int(world.rows("SELECT id FROM users WHERE email = ?", (email,))[0]["id"])


def _stamp(world: World, offset: int, rng: random.Random) -> str:
    return f"{world.day(offset).isoformat()}T{rng.randrange(8, 20):02d}:{rng.randrange(60):02d}:00"


def email_count(rng: random.Random, world: World) -> Draft:
    c = _contact(rng, world)
    sender = _uid(world, c["email"])
    plant = [
        {
            "sender_id": sender,
            "recipient_id": 1,
            "subject": f"Re: {rng.choice(WORDS)}",
            "body": "See you soon.",
            "sent_at": _stamp(world, -rng.randrange(1, 60), rng),
        }  # fmt: skip
        for _ in range(rng.randrange(1, 8))
    ]
    name = f"{c['first_name']} {c['last_name']}"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        n = w.rows("SELECT count(*) AS n FROM emails WHERE sender_id = ? AND recipient_id = 1", (sender,))[0][
            "n"
        ]
        return str(n), []

    code = PRELUDE + (
        f'c = [x for x in fetch(apis.contacts.show_contacts, access_token=token("contacts"), query={name!r})]\n'
        "email = c[0]['email']\n"
        'inbox = fetch(apis.email.show_inbox, access_token=token("email"))\n'
        "apis.supervisor.complete_task(answer=str(sum(1 for m in inbox if m['sender_email'] == email)))\n"
    )
    return Draft(
        f"How many emails have I received from {name}?",
        ("contacts", "email"),
        code,
        expect,
        {"emails": plant},
    )


def approve_small(rng: random.Random, world: World) -> Draft:
    limit = rng.choice((20, 25, 30, 40))
    rows = []
    for _ in range(rng.randrange(6, 13)):
        status = rng.choice(("pending", "pending", "pending", "approved", "denied"))
        rows.append(
            {"requester_id": rng.randrange(2, 101), "payer_id": 1, "amount": float(rng.randrange(5, 80)),
             "description": rng.choice(WORDS), "status": status, "created_at": _stamp(world, -rng.randrange(1, 30), rng)}
        )  # fmt: skip

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        hits = w.rows(
            "SELECT * FROM payment_requests WHERE payer_id = 1 AND status = 'pending' AND amount <= ?",
            (limit,),
        )
        changes: list[dict[str, Any]] = []
        for r in hits:
            changes.append(
                {"op": "update", "table": "payment_requests", "id": r["id"], "set": {"status": "approved"}}
            )
            changes.append(
                {"op": "insert", "table": "transactions",
                 "match": {"sender_id": 1, "receiver_id": r["requester_id"], "amount": r["amount"]}}
            )  # fmt: skip
        return None, changes

    code = PRELUDE + (
        't = token("payments")\n'
        "for r in fetch(apis.payments.show_payment_requests, access_token=t, status='pending'):\n"
        f"    if r['amount'] <= {limit}:\n"
        "        apis.payments.approve_payment_request(access_token=t, request_id=r['request_id'])\n"
        "apis.supervisor.complete_task()\n"
    )
    text = f"Approve every pending payment request I received that is for at most ${limit}; leave the others as they are."
    return Draft(text, ("payments",), code, expect, {"payment_requests": rows})


def pay_relationship(rng: random.Random, world: World) -> Draft:
    rel = _contact(rng, world)["relationship"]
    amount = float(rng.choice((5, 10, 12, 15, 20)))
    desc = f"{rng.choice(WORDS)} share"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        rows = w.rows("SELECT email FROM contacts WHERE owner_id = 1 AND relationship = ?", (rel,))
        changes = [
            {"op": "insert", "table": "transactions",
             "match": {"sender_id": 1, "receiver_id": _uid(w, r["email"]), "amount": amount, "description": desc}}
            for r in rows
        ]  # fmt: skip
        return None, changes

    code = PRELUDE + (
        f'people = fetch(apis.contacts.show_contacts, access_token=token("contacts"), relationship={rel!r})\n'
        't = token("payments")\n'
        "for p in people:\n"
        f"    apis.payments.send_money(access_token=t, receiver_email=p['email'], amount={amount}, description={desc!r})\n"
        "apis.supervisor.complete_task()\n"
    )
    text = f"Send ${amount:g} to each of my {rel} contacts with the description '{desc}'."
    return Draft(text, ("contacts", "payments"), code, expect)


def todo_from_email(rng: random.Random, world: World) -> Draft:
    subject = f"{rng.choice(WORDS).title()} checklist"
    items = [
        f"{rng.choice(('Buy', 'Pack', 'Call about', 'Fix'))} the {w}"
        for w in rng.sample(WORDS, rng.randrange(2, 6))
    ]
    body = "Hi! Here is the list:\n" + "\n".join(f"- {i}" for i in items) + "\nThanks"
    lst = rng.choice(("errands", "weekend", "trip"))
    due = world.day(rng.randrange(2, 20)).isoformat()
    plant = [{"sender_id": rng.randrange(2, 101), "recipient_id": 1, "subject": subject, "body": body,
              "sent_at": _stamp(world, -rng.randrange(1, 5), rng)}]  # fmt: skip
    changes = [
        {"op": "insert", "table": "todos",
         "match": {"user_id": SUPERVISOR_ID, "title": i, "list_name": lst, "due_date": due, "done": 0}}
        for i in items
    ]  # fmt: skip
    code = PRELUDE + (
        't = token("email")\n'
        f"m = fetch(apis.email.show_inbox, access_token=t, query={subject!r})[0]\n"
        "body = apis.email.show_email(access_token=t, email_id=m['email_id'])['body']\n"
        'tt = token("todo")\n'
        "for line in body.splitlines():\n"
        "    if line.startswith('- '):\n"
        f"        apis.todo.create_task(access_token=tt, title=line[2:], list_name={lst!r}, due_date={due!r})\n"
        "apis.supervisor.complete_task()\n"
    )
    text = f"Add each item of the '{subject}' email I received as a to-do in my '{lst}' list, due {due}."
    return Draft(text, ("email", "todo"), code, lambda w: (None, changes), {"emails": plant})


def count_events(rng: random.Random, world: World) -> Draft:
    start = rng.randrange(-30, 20)
    d1, d2 = world.day(start).isoformat(), world.day(start + rng.randrange(7, 30)).isoformat()
    plant = []
    for _ in range(rng.randrange(2, 8)):
        day = world.day(start + rng.randrange(0, 30))
        plant.append({"owner_id": 1, "title": f"{rng.choice(WORDS).title()} sync", "start_time": f"{day}T10:00:00",
                      "end_time": f"{day}T11:00:00", "location": "Online", "attendee_emails": "[]"})  # fmt: skip

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        n = w.rows(
            "SELECT count(*) AS n FROM events WHERE owner_id = 1 AND substr(start_time, 1, 10) BETWEEN ? AND ?",
            (d1, d2),
        )[0]["n"]
        return str(n), []

    code = PRELUDE + (
        f'ev = fetch(apis.calendar.show_events, access_token=token("calendar"), start_date={d1!r}, end_date={d2!r})\n'
        "apis.supervisor.complete_task(answer=str(len(ev)))\n"
    )
    return Draft(
        f"How many calendar events do I have starting between {d1} and {d2}, inclusive?",
        ("calendar",),
        code,
        expect,
        {"events": plant},
    )


def note_sent_total(rng: random.Random, world: World) -> Draft:
    c = _contact(rng, world)
    pid = _uid(world, c["email"])
    month = world.day(-rng.randrange(20, 60))
    ym = f"{month.year}-{month.month:02d}"
    plant = [
        {"sender_id": 1, "receiver_id": pid, "amount": round(rng.uniform(5, 60), 2), "description": rng.choice(WORDS),
         "created_at": f"{ym}-{rng.randrange(1, 29):02d}T12:00:00"}
        for _ in range(rng.randrange(2, 5))
    ]  # fmt: skip
    title = f"Sent to {c['first_name']} in {calendar.month_name[month.month]}"
    name = f"{c['first_name']} {c['last_name']}"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        total = w.rows(
            "SELECT sum(amount) AS v FROM transactions WHERE sender_id = 1 AND receiver_id = ? AND created_at LIKE ?",
            (pid, f"{ym}-%"),
        )[0]["v"]
        match = {"user_id": 1, "title": title, "content": f"{total:.2f}"}
        return None, [{"op": "insert", "table": "notes", "match": match}]

    code = PRELUDE + (
        f'email = fetch(apis.contacts.show_contacts, access_token=token("contacts"), query={name!r})[0]["email"]\n'
        'sent = fetch(apis.payments.show_transactions, access_token=token("payments"), direction="sent", other_email=email)\n'
        f"total = sum(x['amount'] for x in sent if x['created_at'].startswith({ym!r}))\n"
        f'apis.notes.create_note(access_token=token("notes"), title={title!r}, content=f"{{total:.2f}}")\n'
        "apis.supervisor.complete_task()\n"
    )
    text = (
        f"Create a note titled '{title}' whose content is the total amount of money I sent to {name} in "
        f"{calendar.month_name[month.month]} {month.year}, written with two decimals (like 12.50) and nothing else."
    )
    return Draft(text, ("contacts", "payments", "notes"), code, expect, {"transactions": plant})


def delete_files(rng: random.Random, world: World) -> Draft:
    folder = rng.choice(("/downloads", "/backup", "/projects"))
    ext = rng.choice(("tmp", "log", "bak"))
    plant = [
        {"owner_id": 1, "path": f"{folder}/{w}_{i}.{rng.choice((ext, ext, 'txt', 'csv'))}", "content": w,
         "created_at": _stamp(world, -rng.randrange(1, 90), rng)}
        for i, w in enumerate(rng.sample(WORDS, rng.randrange(6, 16)))
    ]  # fmt: skip

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        rows = w.rows("SELECT id, path FROM files WHERE owner_id = 1 AND path LIKE ?", (f"{folder}/%",))
        return None, [
            {"op": "delete", "table": "files", "id": r["id"]} for r in rows if r["path"].endswith(f".{ext}")
        ]

    code = PRELUDE + (
        't = token("files")\n'
        f"for path in fetch(apis.files.show_directory, access_token=t, directory={folder!r}):\n"
        f"    if path.endswith('.{ext}'):\n"
        "        apis.files.delete_file(access_token=t, path=path)\n"
        "apis.supervisor.complete_task()\n"
    )
    return Draft(
        f"Delete every file in {folder} whose name ends with .{ext}.",
        ("files",),
        code,
        expect,
        {"files": plant},
    )


def overdue_todos(rng: random.Random, world: World) -> Draft:
    lst = rng.choice(("chores", "garden", "paperwork"))
    today = world.today.isoformat()
    plant = [
        {"user_id": 1, "title": f"{rng.choice(('Clean', 'Check', 'Sort'))} the {w}", "list_name": lst,
         "due_date": world.day(rng.randrange(-15, 15)).isoformat(), "done": int(rng.random() < 0.3),
         "created_at": _stamp(world, -30, rng)}
        for w in rng.sample(WORDS, rng.randrange(4, 10))
    ]  # fmt: skip

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        rows = w.rows(
            "SELECT id FROM todos WHERE user_id = 1 AND list_name = ? AND done = 0 AND due_date < ?",
            (lst, today),
        )
        return None, [{"op": "update", "table": "todos", "id": r["id"], "set": {"done": 1}} for r in rows]

    code = PRELUDE + (
        't = token("todo")\n'
        f"for x in fetch(apis.todo.show_tasks, access_token=t, list_name={lst!r}, done=False):\n"
        f"    if x['due_date'] < {today!r}:\n"
        "        apis.todo.mark_task_done(access_token=t, task_id=x['task_id'])\n"
        "apis.supervisor.complete_task()\n"
    )
    text = f"Mark as done every open to-do in my '{lst}' list that was due before today."
    return Draft(text, ("todo",), code, expect, {"todos": plant})


def email_phone(rng: random.Random, world: World) -> Draft:
    a, b = rng.sample(world.rows("SELECT * FROM contacts WHERE owner_id = 1 ORDER BY id"), 2)
    an, bn = f"{a['first_name']} {a['last_name']}", f"{b['first_name']} {b['last_name']}"
    subject = f"Phone number of {bn}"
    changes = [{"op": "insert", "table": "emails",
                "match": {"sender_id": 1, "recipient_id": _uid(world, a["email"]), "subject": subject, "body": b["phone"]}}]  # fmt: skip
    code = PRELUDE + (
        't = token("contacts")\n'
        f"a = fetch(apis.contacts.show_contacts, access_token=t, query={an!r})[0]\n"
        f"b = fetch(apis.contacts.show_contacts, access_token=t, query={bn!r})[0]\n"
        f'apis.email.send_email(access_token=token("email"), recipient_email=a["email"], subject={subject!r}, body=b["phone"])\n'
        "apis.supervisor.complete_task()\n"
    )
    text = f"Email {an} the phone number of my contact {bn}, with the subject '{subject}' and only the number as the body."
    return Draft(text, ("contacts", "email"), code, lambda w: (None, changes))


TEMPLATES: dict[str, Callable[[random.Random, World], Draft]] = {
    "email_count": email_count,
    "approve_small_requests": approve_small,
    "pay_relationship": pay_relationship,
    "todo_from_email": todo_from_email,
    "count_events": count_events,
    "note_sent_total": note_sent_total,
    "delete_files": delete_files,
    "overdue_todos": overdue_todos,
    "email_phone": email_phone,
}
