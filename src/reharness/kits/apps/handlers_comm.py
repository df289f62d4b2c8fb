"""The APIs of the communication and money apps: payments, email, contacts, calendar and files.

Same conventions as :mod:`.handlers`: functions over the episode's SQLite world, registered with their specs;
list APIs newest first (events: by start time) and paginated by the server.
"""

from __future__ import annotations

import json
from typing import Any

from reharness.kits.apps.handlers import P, S, _email_of, _owned, _user_by_email, _write, api
from reharness.kits.apps.server import HttpError


def _now(s: S) -> str:
    return f"{s.world.today.isoformat()}T12:00:00"


# ---------------------------------------------------------------------- payments
def _balance(s: S, user: int) -> float:
    start = s.world.rows("SELECT initial_balance FROM wallets WHERE user_id = ?", (user,))[0][
        "initial_balance"
    ]
    got = s.world.rows(
        "SELECT coalesce(sum(amount), 0) AS v FROM transactions WHERE receiver_id = ?", (user,)
    )
    sent = s.world.rows("SELECT coalesce(sum(amount), 0) AS v FROM transactions WHERE sender_id = ?", (user,))
    return round(float(start) + float(got[0]["v"]) - float(sent[0]["v"]), 2)


@api("payments", "show_balance", "Show your balance.")
def show_balance(s: S, user: int) -> dict[str, float]:
    return {"balance": _balance(s, user)}


@api(
    "payments",
    "show_transactions",
    "List your transactions, newest first.",
    P("direction", "str", "sent or received (default: both).", False, None, choices=("sent", "received")),
    P("other_email", "str", "Only transactions with this person.", False, None),
    paginated=True,
)
def show_transactions(
    s: S, user: int, direction: str | None, other_email: str | None
) -> list[dict[str, Any]]:
    rows = s.world.rows(
        "SELECT * FROM transactions WHERE sender_id = ? OR receiver_id = ? ORDER BY created_at DESC, id DESC",
        (user, user),
    )
    out = []
    for r in rows:
        if (
            direction == "sent"
            and r["sender_id"] != user
            or direction == "received"
            and r["sender_id"] == user
        ):
            continue
        other = r["receiver_id"] if r["sender_id"] == user else r["sender_id"]
        if other_email is not None and _email_of(s, other) != other_email.strip().lower():
            continue
        out.append(
            {
                "transaction_id": r["id"],
                "sender_email": _email_of(s, r["sender_id"]),
                "receiver_email": _email_of(s, r["receiver_id"]),
                "amount": r["amount"],
                "description": r["description"],
                "created_at": r["created_at"],
            }
        )
    return out


@api(
    "payments",
    "send_money",
    "Send money to another user.",
    P("receiver_email", "str", "The receiver's email."),
    P("amount", "float", "Amount in dollars.", minimum=0.01),
    P("description", "str", "What it is for.", False, ""),
)
def send_money(s: S, user: int, receiver_email: str, amount: float, description: str) -> dict[str, Any]:
    receiver = _user_by_email(s, receiver_email)
    if receiver == user:
        raise HttpError(422, "You cannot send money to yourself.")
    if amount > _balance(s, user):
        raise HttpError(409, "Insufficient balance.")
    tid = _write(
        s,
        "INSERT INTO transactions (sender_id, receiver_id, amount, description, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (user, receiver, round(amount, 2), description, _now(s)),
    )
    return {"message": "Money sent.", "transaction_id": tid}


REQUEST_ID = P("request_id", "int", "The payment request's id.")


@api(
    "payments",
    "show_payment_requests",
    "List payment requests others sent you, newest first.",
    P("status", "str", "Only this status.", False, None, choices=("pending", "approved", "denied")),
    paginated=True,
)
def show_payment_requests(s: S, user: int, status: str | None) -> list[dict[str, Any]]:
    rows = s.world.rows(
        "SELECT * FROM payment_requests WHERE payer_id = ? ORDER BY created_at DESC, id DESC", (user,)
    )
    return [
        {
            "request_id": r["id"],
            "requester_email": _email_of(s, r["requester_id"]),
            "amount": r["amount"],
            "description": r["description"],
            "status": r["status"],
            "created_at": r["created_at"],
        }
        for r in rows
        if status is None or r["status"] == status
    ]


def _pending(s: S, user: int, request_id: int) -> dict[str, Any]:
    r = _owned(s, "payment_requests", "payer_id", request_id, user, "payment request")
    if r["status"] != "pending":
        raise HttpError(409, f"Payment request {request_id} is already {r['status']}.")
    return r


@api("payments", "approve_payment_request", "Approve a pending request: pays the requester.", REQUEST_ID)
def approve_payment_request(s: S, user: int, request_id: int) -> dict[str, Any]:
    r = _pending(s, user, request_id)
    if r["amount"] > _balance(s, user):
        raise HttpError(409, "Insufficient balance.")
    _write(s, "UPDATE payment_requests SET status = 'approved' WHERE id = ?", (request_id,))
    tid = _write(
        s,
        "INSERT INTO transactions (sender_id, receiver_id, amount, description, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (user, r["requester_id"], r["amount"], r["description"], _now(s)),
    )
    return {"message": "Payment request approved.", "transaction_id": tid}


@api("payments", "deny_payment_request", "Deny a pending request.", REQUEST_ID)
def deny_payment_request(s: S, user: int, request_id: int) -> dict[str, str]:
    _pending(s, user, request_id)
    _write(s, "UPDATE payment_requests SET status = 'denied' WHERE id = ?", (request_id,))
    return {"message": "Payment request denied."}


# ---------------------------------------------------------------------- email
EMAIL_ID = P("email_id", "int", "The email's id.")


@api(
    "email",
    "show_inbox",
    "List received emails, newest first (optionally whose subject contains query).",
    P("query", "str", "Text the subject must contain (case-insensitive).", False, ""),
    paginated=True,
)
def show_inbox(s: S, user: int, query: str) -> list[dict[str, Any]]:
    rows = s.world.rows(
        "SELECT * FROM emails WHERE recipient_id = ? AND instr(lower(subject), lower(?)) "
        "ORDER BY sent_at DESC, id DESC",
        (user, query),
    )
    return [
        {
            "email_id": r["id"],
            "sender_email": _email_of(s, r["sender_id"]),
            "subject": r["subject"],
            "sent_at": r["sent_at"],
        }
        for r in rows
    ]


@api("email", "show_email", "Show one received or sent email with its body.", EMAIL_ID)
def show_email(s: S, user: int, email_id: int) -> dict[str, Any]:
    rows = s.world.rows(
        "SELECT * FROM emails WHERE id = ? AND (recipient_id = ? OR sender_id = ?)", (email_id, user, user)
    )
    if not rows:
        raise HttpError(404, f"No email with id {email_id}.")
    r = rows[0]
    return {
        "email_id": r["id"],
        "sender_email": _email_of(s, r["sender_id"]),
        "recipient_email": _email_of(s, r["recipient_id"]),
        "subject": r["subject"],
        "body": r["body"],
        "sent_at": r["sent_at"],
    }


@api(
    "email",
    "send_email",
    "Send an email.",
    P("recipient_email", "str", "The recipient's email."),
    P("subject", "str", "Subject."),
    P("body", "str", "Body."),
)
def send_email(s: S, user: int, recipient_email: str, subject: str, body: str) -> dict[str, Any]:
    recipient = _user_by_email(s, recipient_email)
    eid = _write(
        s,
        "INSERT INTO emails (sender_id, recipient_id, subject, body, sent_at) VALUES (?, ?, ?, ?, ?)",
        (user, recipient, subject, body, _now(s)),
    )
    return {"message": "Email sent.", "email_id": eid}


@api("email", "delete_email", "Delete a received email.", EMAIL_ID)
def delete_email(s: S, user: int, email_id: int) -> dict[str, str]:
    _owned(s, "emails", "recipient_id", email_id, user, "email")
    _write(s, "DELETE FROM emails WHERE id = ?", (email_id,))
    return {"message": "Email deleted."}


# ---------------------------------------------------------------------- contacts
CONTACT_FIELDS = ("first_name", "last_name", "email", "phone", "birthday", "relationship")


@api(
    "contacts",
    "show_contacts",
    "List your contacts by name, optionally matching query (in the name or email) or one relationship.",
    P("query", "str", "Text the full name or email must contain (case-insensitive).", False, ""),
    P("relationship", "str", "Only this relationship (friend, coworker, family, ...).", False, None),
    paginated=True,
)
def show_contacts(s: S, user: int, query: str, relationship: str | None) -> list[dict[str, Any]]:
    rows = s.world.rows(
        "SELECT * FROM contacts WHERE owner_id = ? ORDER BY first_name, last_name, id", (user,)
    )
    q = query.strip().lower()
    return [
        {"contact_id": r["id"], **{k: r[k] for k in CONTACT_FIELDS}}
        for r in rows
        if (relationship is None or r["relationship"] == relationship)
        and (q in f"{r['first_name']} {r['last_name']}".lower() or q in r["email"])
    ]


@api(
    "contacts",
    "add_contact",
    "Add a contact.",
    P("first_name", "str", "First name."),
    P("last_name", "str", "Last name."),
    P("email", "str", "Email."),
    P("phone", "str", "Phone.", False, ""),
    P("relationship", "str", "Relationship.", False, "friend"),
)
def add_contact(
    s: S, user: int, first_name: str, last_name: str, email: str, phone: str, relationship: str
) -> dict[str, Any]:
    cid = _write(
        s,
        "INSERT INTO contacts (owner_id, first_name, last_name, email, phone, birthday, relationship) "
        "VALUES (?, ?, ?, ?, ?, NULL, ?)",
        (user, first_name, last_name, email, phone, relationship),
    )
    return {"message": "Contact added.", "contact_id": cid}


# ---------------------------------------------------------------------- calendar
EVENT_ID = P("event_id", "int", "The event's id.")


@api(
    "calendar",
    "show_events",
    "List your events by start time, optionally those starting within [start_date, end_date] (YYYY-MM-DD).",
    P("start_date", "str", "First day (inclusive).", False, None),
    P("end_date", "str", "Last day (inclusive).", False, None),
    paginated=True,
)
def show_events(s: S, user: int, start_date: str | None, end_date: str | None) -> list[dict[str, Any]]:
    rows = s.world.rows("SELECT * FROM events WHERE owner_id = ? ORDER BY start_time, id", (user,))
    return [
        {
            "event_id": r["id"],
            "title": r["title"],
            "start_time": r["start_time"],
            "end_time": r["end_time"],
            "location": r["location"],
            "attendee_emails": json.loads(r["attendee_emails"]),
        }
        for r in rows
        if (start_date is None or r["start_time"][:10] >= start_date)
        and (end_date is None or r["start_time"][:10] <= end_date)
    ]


@api(
    "calendar",
    "create_event",
    "Create an event.",
    P("title", "str", "Title."),
    P("start_time", "str", "Start, YYYY-MM-DDTHH:MM:SS."),
    P("end_time", "str", "End, YYYY-MM-DDTHH:MM:SS."),
    P("location", "str", "Location.", False, ""),
    P("attendee_emails", "list[str]", "Emails of the attendees.", False, None),
)
def create_event(
    s: S,
    user: int,
    title: str,
    start_time: str,
    end_time: str,
    location: str,
    attendee_emails: list[str] | None,
) -> dict[str, Any]:
    if end_time < start_time:
        raise HttpError(422, "end_time must not be before start_time.")
    eid = _write(
        s,
        "INSERT INTO events (owner_id, title, start_time, end_time, location, attendee_emails) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (user, title, start_time, end_time, location, json.dumps(sorted(attendee_emails or []))),
    )
    return {"message": "Event created.", "event_id": eid}


@api("calendar", "delete_event", "Delete an event.", EVENT_ID)
def delete_event(s: S, user: int, event_id: int) -> dict[str, str]:
    _owned(s, "events", "owner_id", event_id, user, "event")
    _write(s, "DELETE FROM events WHERE id = ?", (event_id,))
    return {"message": "Event deleted."}


# ---------------------------------------------------------------------- files
PATH = P("path", "str", "Absolute file path, e.g. /documents/plan.txt.")


def _file(s: S, user: int, path: str) -> dict[str, Any]:
    rows = s.world.rows("SELECT * FROM files WHERE owner_id = ? AND path = ?", (user, path))
    if not rows:
        raise HttpError(404, f"No file at {path!r}.")
    return rows[0]


@api(
    "files",
    "show_directory",
    "List the file paths in a directory (and below it), sorted.",
    P("directory", "str", "Directory, e.g. /documents.", False, "/"),
    paginated=True,
)
def show_directory(s: S, user: int, directory: str) -> list[str]:
    prefix = directory.rstrip("/") + "/"
    rows = s.world.rows("SELECT path FROM files WHERE owner_id = ? ORDER BY path", (user,))
    return [r["path"] for r in rows if r["path"].startswith(prefix)]


@api("files", "show_file", "Show a file's content.", PATH)
def show_file(s: S, user: int, path: str) -> dict[str, Any]:
    r = _file(s, user, path)
    return {"path": r["path"], "content": r["content"], "created_at": r["created_at"]}


@api("files", "create_file", "Create a file.", PATH, P("content", "str", "Content."))
def create_file(s: S, user: int, path: str, content: str) -> dict[str, Any]:
    if s.world.rows("SELECT id FROM files WHERE owner_id = ? AND path = ?", (user, path)):
        raise HttpError(409, f"A file already exists at {path!r}.")
    _write(
        s,
        "INSERT INTO files (owner_id, path, content, created_at) VALUES (?, ?, ?, ?)",
        (user, path, content, _now(s)),
    )
    return {"message": "File created."}


@api("files", "delete_file", "Delete a file.", PATH)
def delete_file(s: S, user: int, path: str) -> dict[str, str]:
    r = _file(s, user, path)
    _write(s, "DELETE FROM files WHERE id = ?", (r["id"],))
    return {"message": "File deleted."}
