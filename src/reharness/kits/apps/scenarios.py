"""Task scenarios of ``apps``: each plants what it needs in a world, states the instruction, and derives the
gold (answer and expected database changes) from the resulting world, plus a ground-truth program.

A scenario template is a function ``(rng, world) -> Draft``; ``world`` is the base world of the variant. Its
``plant`` rows are added to the world spec (so they exist when the episode starts), and ``expect(world)``
computes the gold on the planted world. The programs use only the public APIs, with pagination and the
lookups a careful agent would do, and end with ``apis.supervisor.complete_task``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from reharness.kits.apps.drafts import PRELUDE, Draft, contact, stamp, uid
from reharness.kits.apps.scenarios_more import delete_files, email_phone, note_sent_total, overdue_todos
from reharness.kits.apps.world import SUPERVISOR_ID, WORDS, World


def email_count(rng: random.Random, world: World) -> Draft:
    c = contact(rng, world)
    sender = uid(world, c["email"])
    plant = [
        {
            "sender_id": sender,
            "recipient_id": 1,
            "subject": f"Re: {rng.choice(WORDS)}",
            "body": "See you soon.",
            "sent_at": stamp(world, -rng.randrange(1, 60), rng),
        }
        for _ in range(rng.randrange(1, 8))
    ]
    name = f"{c['first_name']} {c['last_name']}"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        n = w.rows("SELECT count(*) AS n FROM emails WHERE sender_id = ? AND recipient_id = 1", (sender,))[0][
            "n"
        ]
        return str(n), []

    code = PRELUDE + (
        'c = fetch(apis.contacts.show_contacts, access_token=token("contacts"),\n'
        f"          query={name!r})\n"
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
            {
                "requester_id": rng.randrange(2, 101),
                "payer_id": 1,
                "amount": float(rng.randrange(5, 80)),
                "description": rng.choice(WORDS),
                "status": status,
                "created_at": stamp(world, -rng.randrange(1, 30), rng),
            }
        )

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
                {
                    "op": "insert",
                    "table": "transactions",
                    "match": {"sender_id": 1, "receiver_id": r["requester_id"], "amount": r["amount"]},
                }
            )
        return None, changes

    code = PRELUDE + (
        't = token("payments")\n'
        "for r in fetch(apis.payments.show_payment_requests, access_token=t, status='pending'):\n"
        f"    if r['amount'] <= {limit}:\n"
        "        apis.payments.approve_payment_request(access_token=t, request_id=r['request_id'])\n"
        "apis.supervisor.complete_task()\n"
    )
    text = f"Approve every pending payment request I received that is for at most ${limit}; "
    text += "leave the others as they are."
    return Draft(text, ("payments",), code, expect, {"payment_requests": rows})


def pay_relationship(rng: random.Random, world: World) -> Draft:
    rel = contact(rng, world)["relationship"]
    amount = float(rng.choice((5, 10, 12, 15, 20)))
    desc = f"{rng.choice(WORDS)} share"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        rows = w.rows("SELECT email FROM contacts WHERE owner_id = 1 AND relationship = ?", (rel,))
        changes = [
            {
                "op": "insert",
                "table": "transactions",
                "match": {
                    "sender_id": 1,
                    "receiver_id": uid(w, r["email"]),
                    "amount": amount,
                    "description": desc,
                },
            }
            for r in rows
        ]
        return None, changes

    code = PRELUDE + (
        f'people = fetch(apis.contacts.show_contacts, access_token=token("contacts"), relationship={rel!r})\n'
        't = token("payments")\n'
        "for p in people:\n"
        "    apis.payments.send_money(access_token=t, receiver_email=p['email'],\n"
        f"                             amount={amount}, description={desc!r})\n"
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
    plant = [
        {
            "sender_id": rng.randrange(2, 101),
            "recipient_id": 1,
            "subject": subject,
            "body": body,
            "sent_at": stamp(world, -rng.randrange(1, 5), rng),
        }
    ]
    changes = [
        {
            "op": "insert",
            "table": "todos",
            "match": {"user_id": SUPERVISOR_ID, "title": i, "list_name": lst, "due_date": due, "done": 0},
        }
        for i in items
    ]
    code = PRELUDE + (
        't = token("email")\n'
        f"m = fetch(apis.email.show_inbox, access_token=t, query={subject!r})[0]\n"
        "body = apis.email.show_email(access_token=t, email_id=m['email_id'])['body']\n"
        'tt = token("todo")\n'
        "for line in body.splitlines():\n"
        "    if line.startswith('- '):\n"
        "        apis.todo.create_task(access_token=tt, title=line[2:],\n"
        f"                              list_name={lst!r}, due_date={due!r})\n"
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
        plant.append(
            {
                "owner_id": 1,
                "title": f"{rng.choice(WORDS).title()} sync",
                "start_time": f"{day}T10:00:00",
                "end_time": f"{day}T11:00:00",
                "location": "Online",
                "attendee_emails": "[]",
            }
        )

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        n = w.rows(
            "SELECT count(*) AS n FROM events WHERE owner_id = 1 "
            "AND substr(start_time, 1, 10) BETWEEN ? AND ?",
            (d1, d2),
        )[0]["n"]
        return str(n), []

    code = PRELUDE + (
        'ev = fetch(apis.calendar.show_events, access_token=token("calendar"),\n'
        f"           start_date={d1!r}, end_date={d2!r})\n"
        "apis.supervisor.complete_task(answer=str(len(ev)))\n"
    )
    return Draft(
        f"How many calendar events do I have starting between {d1} and {d2}, inclusive?",
        ("calendar",),
        code,
        expect,
        {"events": plant},
    )


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
