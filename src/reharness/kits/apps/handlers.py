"""The APIs of the simulated apps (supervisor, api_docs, notes, todo, payments, email, contacts, calendar,
files): each a small function over the episode's SQLite world, registered with its spec in
:data:`~.server.REGISTRY`. List APIs return newest first and are paginated by the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reharness.kits.apps.server import REGISTRY, ApiSpec, AppServer, HttpError, Param

S = AppServer
P = Param


def api(
    app: str, name: str, description: str, *params: Param, auth: bool = True, paginated: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    method = (
        "POST"
        if name.split("_")[0]
        in {"create", "send", "add", "delete", "mark", "approve", "deny", "update", "complete", "login"}
        else "GET"
    )

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.add(ApiSpec(app, name, description, fn, tuple(params), auth, paginated, method))
        return fn

    return register


def _login_api(app: str) -> None:
    def login(s: S, user: None, username: str, password: str) -> dict[str, Any]:
        return s.login(app, username, password)

    api(
        app,
        "login",
        f"Log in to {app}; returns an access_token to pass to every other {app} API.",
        P("username", "str", "Your email address."),
        P("password", "str", f"Your {app} password (see apis.supervisor.show_account_passwords())."),
        auth=False,
    )(login)


def _email_of(s: S, pid: int) -> str:
    return str(s.world.person(pid)["email"])


def _user_by_email(s: S, email: str) -> int:
    rows = s.world.rows("SELECT id FROM users WHERE email = ?", (email.strip().lower(),))
    if not rows:
        raise HttpError(404, f"No user with email {email!r}.")
    return int(rows[0]["id"])


def _owned(s: S, table: str, owner_col: str, item_id: int, user: int, what: str) -> dict[str, Any]:
    rows = s.world.rows(f"SELECT * FROM {table} WHERE id = ? AND {owner_col} = ?", (item_id, user))
    if not rows:
        raise HttpError(404, f"No {what} with id {item_id}.")
    return rows[0]


def _write(s: S, sql: str, args: tuple[Any, ...]) -> int:
    cur = s.world.db.execute(sql, args)
    s.world.db.commit()
    return int(cur.lastrowid or 0)


# ---------------------------------------------------------------------- supervisor and api_docs
REGISTRY.apps.update(
    {
        "supervisor": "The person you work for: profile, account passwords, and completing the task.",
        "api_docs": "Documentation of every app and API.",
        "notes": "A note-taking app.",
        "todo": "A to-do list app with named lists and due dates.",
        "payments": "A peer-to-peer payments app: balance, transactions, payment requests.",
        "email": "An email app: inbox and sending.",
        "contacts": "The supervisor's phone contacts, with relationships.",
        "calendar": "A calendar of events.",
        "files": "A personal file system.",
    }
)


@api("supervisor", "show_profile", "Show the supervisor's profile.", auth=False)
def show_profile(s: S, user: None) -> dict[str, Any]:
    sup = s.world.supervisor
    return {k: sup[k] for k in ("first_name", "last_name", "email", "phone", "birthday")}


@api("supervisor", "show_account_passwords", "Show the supervisor's password for every app.", auth=False)
def show_account_passwords(s: S, user: None) -> list[dict[str, str]]:
    rows = s.world.rows("SELECT app, password FROM accounts WHERE user_id = 1 ORDER BY app")
    return [{"account_name": r["app"], "password": r["password"]} for r in rows]


@api(
    "supervisor",
    "complete_task",
    "Mark the task as done (status='success', with answer= for questions) or as impossible (status='fail').",
    P("answer", "scalar", "The answer, for tasks that ask a question (text or a number).", False, None),
    P("status", "str", "success or fail.", False, "success", choices=("success", "fail")),
    auth=False,
)
def complete_task(s: S, user: None, answer: Any, status: str) -> dict[str, str]:
    s.completion = {"answer": answer, "status": status}
    return {"message": "Task marked as completed."}


@api("api_docs", "show_app_descriptions", "List every app with a one-line description.", auth=False)
def show_app_descriptions(s: S, user: None) -> list[dict[str, str]]:
    return [{"name": k, "description": v} for k, v in REGISTRY.apps.items()]


@api(
    "api_docs",
    "show_api_descriptions",
    "List the APIs of one app.",
    P("app_name", "str", "The app's name."),
    auth=False,
)
def show_api_descriptions(s: S, user: None, app_name: str) -> list[dict[str, str]]:
    if app_name not in REGISTRY.apis:
        raise HttpError(404, f"No app named {app_name!r}.")
    return [{"name": a.name, "description": a.description} for a in REGISTRY.apis[app_name].values()]


@api(
    "api_docs",
    "show_api_doc",
    "Show one API's full specification (parameters, types, defaults, constraints).",
    P("app_name", "str", "The app's name."),
    P("api_name", "str", "The API's name."),
    auth=False,
)
def show_api_doc(s: S, user: None, app_name: str, api_name: str) -> dict[str, Any]:
    spec = REGISTRY.apis.get(app_name, {}).get(api_name)
    if spec is None:
        raise HttpError(404, f"No API {app_name}.{api_name}.")
    return spec.doc()


for _app in ("notes", "todo", "payments", "email", "contacts", "calendar", "files"):
    _login_api(_app)

# ---------------------------------------------------------------------- notes
NOTE_ID = P("note_id", "int", "The note's id.")


@api(
    "notes",
    "show_notes",
    "List your notes (newest first), optionally those whose title contains query.",
    P("query", "str", "Text the title must contain (case-insensitive).", False, ""),
    paginated=True,
)
def show_notes(s: S, user: int, query: str) -> list[dict[str, Any]]:
    rows = s.world.rows(
        "SELECT id, title, created_at, pinned FROM notes WHERE user_id = ? AND instr(lower(title), lower(?)) "
        "ORDER BY created_at DESC, id DESC",
        (user, query),
    )
    return [
        {"note_id": r["id"], "title": r["title"], "created_at": r["created_at"], "pinned": bool(r["pinned"])}
        for r in rows
    ]


@api("notes", "show_note", "Show one note with its content.", NOTE_ID)
def show_note(s: S, user: int, note_id: int) -> dict[str, Any]:
    r = _owned(s, "notes", "user_id", note_id, user, "note")
    return {
        "note_id": r["id"],
        "title": r["title"],
        "content": r["content"],
        "created_at": r["created_at"],
        "pinned": bool(r["pinned"]),
    }


@api(
    "notes",
    "create_note",
    "Create a note.",
    P("title", "str", "Title."),
    P("content", "str", "Content."),
    P("pinned", "bool", "Pin it.", False, False),
)
def create_note(s: S, user: int, title: str, content: str, pinned: bool) -> dict[str, Any]:
    now = f"{s.world.today.isoformat()}T12:00:00"
    nid = _write(
        s,
        "INSERT INTO notes (user_id, title, content, created_at, pinned) VALUES (?, ?, ?, ?, ?)",
        (user, title, content, now, int(pinned)),
    )
    return {"message": "Note created.", "note_id": nid}


@api("notes", "delete_note", "Delete a note.", NOTE_ID)
def delete_note(s: S, user: int, note_id: int) -> dict[str, str]:
    _owned(s, "notes", "user_id", note_id, user, "note")
    _write(s, "DELETE FROM notes WHERE id = ?", (note_id,))
    return {"message": "Note deleted."}


# ---------------------------------------------------------------------- todo
TASK_ID = P("task_id", "int", "The to-do's id.")


@api(
    "todo",
    "show_tasks",
    "List your to-dos (soonest due first), optionally of one list and done state.",
    P("list_name", "str", "Only this list.", False, None),
    P("done", "bool", "Only done (true) or open (false) to-dos.", False, None),
    paginated=True,
)
def show_tasks(s: S, user: int, list_name: str | None, done: bool | None) -> list[dict[str, Any]]:
    rows = s.world.rows("SELECT * FROM todos WHERE user_id = ? ORDER BY due_date, id", (user,))
    return [
        {
            "task_id": r["id"],
            "title": r["title"],
            "list_name": r["list_name"],
            "due_date": r["due_date"],
            "done": bool(r["done"]),
        }
        for r in rows
        if (list_name is None or r["list_name"] == list_name) and (done is None or bool(r["done"]) == done)
    ]


@api(
    "todo",
    "create_task",
    "Create a to-do.",
    P("title", "str", "Title."),
    P("list_name", "str", "List to put it in.", False, "inbox"),
    P("due_date", "str", "Due date YYYY-MM-DD.", False, None),
)
def create_task(s: S, user: int, title: str, list_name: str, due_date: str | None) -> dict[str, Any]:
    now = f"{s.world.today.isoformat()}T12:00:00"
    tid = _write(
        s,
        "INSERT INTO todos (user_id, title, list_name, due_date, done, created_at) VALUES (?, ?, ?, ?, 0, ?)",
        (user, title, list_name, due_date, now),
    )
    return {"message": "To-do created.", "task_id": tid}


@api("todo", "mark_task_done", "Mark a to-do as done.", TASK_ID)
def mark_task_done(s: S, user: int, task_id: int) -> dict[str, str]:
    _owned(s, "todos", "user_id", task_id, user, "to-do")
    _write(s, "UPDATE todos SET done = 1 WHERE id = ?", (task_id,))
    return {"message": "To-do marked as done."}


@api("todo", "delete_task", "Delete a to-do.", TASK_ID)
def delete_task(s: S, user: int, task_id: int) -> dict[str, str]:
    _owned(s, "todos", "user_id", task_id, user, "to-do")
    _write(s, "DELETE FROM todos WHERE id = ?", (task_id,))
    return {"message": "To-do deleted."}
