"""Apps operators: API-doc lookup after a misused API, login-before-use after an auth error, pagination.

They read the ``apps`` env's ``ctx`` fields only: ``last_error_kind`` (``auth_error``, ``not_found``,
``validation_error``, ``api_error``, ``code_error``, ``timeout``), ``api_errors`` (count per status),
``logged_in`` (apps with a token), ``api_calls`` and ``task.apps`` / ``task.asks_question``; before an action,
``action.api_calls`` (the ``app.api`` names the code calls) and ``action.completes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

DOC_HINT = """
def api_doc_lookup(ctx, nb):
    kind = str(ctx.get("last_error_kind") or "")
    if kind not in ("not_found", "validation_error", "api_error"):
        nb["doc_streak"] = 0
        return None
    nb["doc_streak"] = nb.get("doc_streak", 0) + 1
    if nb["doc_streak"] < <<streak>>:
        return None
    message = "The last API call was rejected (" + kind.replace("_", " ") + "). Do not guess names or "
    message += "arguments: read the spec first with apis.api_docs.show_api_doc(app_name=..., api_name=...)"
    message += " (apis.api_docs.show_api_descriptions(app_name=...) lists an app's APIs), then call it with "
    message += "exactly the documented parameters."
<<EXAMPLE>>    return {"type": "inject_hint", "message": message[:900]}
"""
DOC_EXAMPLE = """    apps = (ctx.get("task") or {}).get("apps") or ()
    if apps:
        message += " This task uses: " + ", ".join(str(a) for a in apps) + "."
"""
DOC_GUARD = """
def api_doc_guard(ctx, nb):
    action = ctx.get("action") or {}
    called = [str(c) for c in (action.get("api_calls") or ())]
    seen = nb.setdefault("documented", [])
    if "api_docs.show_api_doc" in called or "api_docs.show_api_descriptions" in called:
        seen.append("*")
        return None
    if seen or not called or nb.get("doc_blocked", 0) >= 1:
        return None
    if str(ctx.get("last_error_kind") or "") not in ("not_found", "validation_error"):
        return None
    nb["doc_blocked"] = nb.get("doc_blocked", 0) + 1
    message = "Before calling " + ", ".join(called[:3]) + " again, look the APIs up with "
    message += "apis.api_docs.show_api_doc(app_name=..., api_name=...)."
    return {"type": "block_and_prompt", "message": message}
"""


class ApiDocLookup(Operator):
    name = "api_doc_lookup"
    summary = "After a rejected API call (404/422), tell the agent to read the API's doc before calling again"
    codes = ("api_error",)
    envs = ("apps",)
    signals = ()
    priority = 40

    def space(self, env: str) -> ParamSpace:
        return {"streak": (1, 2), "example": (True, False), "guard": (False, True)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        example = DOC_EXAMPLE if params["example"] else ""
        out = {
            "after_feedback": Fragment(
                "api_doc_lookup", fill(DOC_HINT, {"EXAMPLE": example}, **{"streak": params["streak"]})
            )
        }
        if params["guard"]:
            out["before_action"] = Fragment("api_doc_guard", DOC_GUARD)
        return out


LOGIN_HINT = """
def login_first(ctx, nb):
    if str(ctx.get("last_error_kind") or "") != "auth_error":
        return None
    nb["auth_hints"] = nb.get("auth_hints", 0) + 1
    if nb["auth_hints"] > <<max_hints>>:
        return None
    logged = [str(a) for a in (ctx.get("logged_in") or ())]
    message = "An API rejected the call as not authenticated (401). Log in to each app first: "
    message += "passwords = {a['account_name']: a['password'] for a in "
    message += "apis.supervisor.show_account_passwords()}; "
    message += "email = apis.supervisor.show_profile()['email']; "
    message += "token = apis.APP.login(username=email, password=passwords['APP'])['access_token']; then pass "
    message += "access_token=token to that app's APIs (a token works for its own app only)."
    if logged:
        message += " You have tokens for: " + ", ".join(logged) + "."
    return {"type": "inject_hint", "message": message[:900]}
"""
LOGIN_SKILL = """
def login_skill(ctx, nb):
    apps = [str(a) for a in ((ctx.get("task") or {}).get("apps") or ())]
    text = "Log in before using an app: get the passwords from apis.supervisor.show_account_passwords() and "
    text += "your email from apis.supervisor.show_profile(), call apis.APP.login(username=..., password=...) "
    text += "and pass its access_token= to every other API of that app."
    if apps:
        text += " Apps this task needs: " + ", ".join(apps) + "."
    return {"skills": [text]}
"""


class LoginFirst(Operator):
    name = "login_first"
    summary = "After a 401, show how to get the password, log in and pass access_token (optionally up front)"
    codes = ("auth_error",)
    envs = ("apps",)
    priority = 35

    def space(self, env: str) -> ParamSpace:
        return {"max_hints": (2, 1, 4), "skill": (False, True)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        out = {"after_feedback": Fragment("login_first", fill(LOGIN_HINT, max_hints=params["max_hints"]))}
        if params["skill"]:
            out["on_init"] = Fragment("login_skill", LOGIN_SKILL)
        return out


PAGES = """
def pagination_reminder(ctx, nb):
    action = ctx.get("action") or {}
    if not action.get("completes") or nb.get("page_blocked", 0) >= <<max_blocks>>:
        return None
    code = str(action.get("code") or "")
    if "page_index" in code or nb.get("paged"):
        return None
    if "page_index" in str(ctx.get("history") or ""):
        nb["paged"] = True
        return None
    nb["page_blocked"] = nb.get("page_blocked", 0) + 1
    message = "Before completing: list APIs return one page at a time (page_limit has a maximum). Did you "
    message += "loop over page_index = 0, 1, 2, ... until a page came back shorter than page_limit? "
    message += "If not, collect every page first, then complete the task."
    return {"type": "block_and_prompt", "message": message}
"""
PAGES_SKILL = """
def pagination_skill(ctx, nb):
    return {"skills": ["List APIs (show_*) are paginated: pass page_index=0, 1, 2, ... and the largest "
                       "page_limit, "
                       "and keep going until a page has fewer than page_limit items."]}
"""


class PaginationReminder(Operator):
    name = "pagination_reminder"
    summary = "Before complete_task, block once if no code paged through a list API; optional up-front skill"
    codes = ("wrong_answer", "collateral_damage")
    envs = ("apps",)
    priority = 25

    def space(self, env: str) -> ParamSpace:
        return {"max_blocks": (1, 2), "skill": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        out = {"before_action": Fragment("pagination_reminder", fill(PAGES, max_blocks=params["max_blocks"]))}
        if params["skill"]:
            out["on_init"] = Fragment("pagination_skill", PAGES_SKILL)
        return out
