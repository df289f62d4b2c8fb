"""More ``apps`` scenario templates (see :mod:`.scenarios`): a three-app note, files, to-dos and an email."""

from __future__ import annotations

import calendar
import random
from typing import Any

from reharness.kits.apps.drafts import PRELUDE, Draft, contact, stamp, uid
from reharness.kits.apps.world import WORDS, World


def note_sent_total(rng: random.Random, world: World) -> Draft:
    c = contact(rng, world)
    pid = uid(world, c["email"])
    month = world.day(-rng.randrange(20, 60))
    ym = f"{month.year}-{month.month:02d}"
    plant = [
        {
            "sender_id": 1,
            "receiver_id": pid,
            "amount": round(rng.uniform(5, 60), 2),
            "description": rng.choice(WORDS),
            "created_at": f"{ym}-{rng.randrange(1, 29):02d}T12:00:00",
        }
        for _ in range(rng.randrange(2, 5))
    ]
    title = f"Sent to {c['first_name']} in {calendar.month_name[month.month]}"
    name = f"{c['first_name']} {c['last_name']}"

    def expect(w: World) -> tuple[Any, list[dict[str, Any]]]:
        total = w.rows(
            "SELECT sum(amount) AS v FROM transactions "
            "WHERE sender_id = 1 AND receiver_id = ? AND created_at LIKE ?",
            (pid, f"{ym}-%"),
        )[0]["v"]
        match = {"user_id": 1, "title": title, "content": f"{total:.2f}"}
        return None, [{"op": "insert", "table": "notes", "match": match}]

    code = PRELUDE + (
        'email = fetch(apis.contacts.show_contacts, access_token=token("contacts"),\n'
        f'              query={name!r})[0]["email"]\n'
        'sent = fetch(apis.payments.show_transactions, access_token=token("payments"),\n'
        '             direction="sent", other_email=email)\n'
        f"total = sum(x['amount'] for x in sent if x['created_at'].startswith({ym!r}))\n"
        f'apis.notes.create_note(access_token=token("notes"), title={title!r}, content=f"{{total:.2f}}")\n'
        "apis.supervisor.complete_task()\n"
    )
    text = (
        f"Create a note titled '{title}' whose content is the total amount of money I sent to {name} in "
        f"{calendar.month_name[month.month]} {month.year}, written with two decimals (like 12.50) and "
        "nothing else."
    )
    return Draft(text, ("contacts", "payments", "notes"), code, expect, {"transactions": plant})


def delete_files(rng: random.Random, world: World) -> Draft:
    folder = rng.choice(("/downloads", "/backup", "/projects"))
    ext = rng.choice(("tmp", "log", "bak"))
    plant = [
        {
            "owner_id": 1,
            "path": f"{folder}/{w}_{i}.{rng.choice((ext, ext, 'txt', 'csv'))}",
            "content": w,
            "created_at": stamp(world, -rng.randrange(1, 90), rng),
        }
        for i, w in enumerate(rng.sample(WORDS, rng.randrange(6, 16)))
    ]

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
        {
            "user_id": 1,
            "title": f"{rng.choice(('Clean', 'Check', 'Sort'))} the {w}",
            "list_name": lst,
            "due_date": world.day(rng.randrange(-15, 15)).isoformat(),
            "done": int(rng.random() < 0.3),
            "created_at": stamp(world, -30, rng),
        }
        for w in rng.sample(WORDS, rng.randrange(4, 10))
    ]

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
    changes = [
        {
            "op": "insert",
            "table": "emails",
            "match": {
                "sender_id": 1,
                "recipient_id": uid(world, a["email"]),
                "subject": subject,
                "body": b["phone"],
            },
        }
    ]
    code = PRELUDE + (
        't = token("contacts")\n'
        f"a = fetch(apis.contacts.show_contacts, access_token=t, query={an!r})[0]\n"
        f"b = fetch(apis.contacts.show_contacts, access_token=t, query={bn!r})[0]\n"
        'apis.email.send_email(access_token=token("email"), recipient_email=a["email"],\n'
        f'                      subject={subject!r}, body=b["phone"])\n'
        "apis.supervisor.complete_task()\n"
    )
    text = (
        f"Email {an} the phone number of my contact {bn}, with the subject '{subject}' and only the number "
    )
    text += "as the body."
    return Draft(text, ("contacts", "email"), code, lambda w: (None, changes))
