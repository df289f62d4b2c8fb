"""What the ``apps`` agent reads and writes: the task prompt, code extraction, the tool spec, observations."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reharness.core.sandbox.interpreter import ExecResult

MAX_OUTPUT_CHARS = 4000
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
FORMAT_ERROR = (
    "No code found. Reply with Python code in one ```python block (it runs in a persistent interpreter "
    "with the `apis` object)."
)
TOOLS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "execute",
            "description": "Run Python code in the persistent interpreter that holds the `apis` object; "
            "returns what it printed, or the traceback.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string", "description": "Python code to run."}},
                "required": ["code"],
            },
        },
    },
)


def task_prompt(instruction: str, supervisor: str, today: str) -> str:
    return (
        f"I am your supervisor, {supervisor}. Today is {today}.\n"
        f"Task: {instruction}\n\n"
        "You act for me through the apps' APIs, by writing Python that runs in a persistent interpreter. "
        "Call APIs as apis.<app>.<api>(**kwargs). Discover them with "
        "apis.api_docs.show_app_descriptions(), apis.api_docs.show_api_descriptions(app_name=...) and "
        "apis.api_docs.show_api_doc(app_name=..., api_name=...). My profile and account passwords are in "
        "apis.supervisor; log in to an app with its login API and pass access_token= to its other APIs. "
        "List APIs return pages (page_index, page_limit up to 20). Use print() to see results. When done, "
        "call apis.supervisor.complete_task(answer=...) (answer only for questions), or "
        "complete_task(status='fail') if the task cannot be done."
    )


def extract_code(action: str) -> str | None:
    """The code of an action: every fenced block joined; else the bare text when it calls ``apis.`` or
    ``print(`` (so a reply of plain code works); else ``None`` (a format error). Never compiled here: the
    host does not parse untrusted code, the confined interpreter reports syntax errors."""
    blocks = FENCE.findall(action)
    if blocks:
        return "\n".join(b.strip("\n") for b in blocks)
    text = action.strip()
    if "```" in text or not ("apis." in text or "print(" in text):
        return None
    return text


def fence(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def action_from_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    if name != "execute":
        raise ValueError(f"unknown tool {name!r}; the only tool is execute(code)")
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip():
        raise ValueError("execute needs a non-empty string argument 'code'")
    return fence(code)


def tool_call_from_action(action: str) -> tuple[str, dict[str, Any]]:
    code = extract_code(action)
    if code is None:
        raise ValueError(f"no code in {action[:80]!r}")
    return "execute", {"code": code}


def observation(result: ExecResult) -> str:
    """Printed output, then the traceback (or the sandbox failure) if the code failed; capped."""
    text = result.output
    if result.error is not None:
        tb = result.error.get("tb") or f"{result.error.get('type')}: {result.error.get('msg')}"
        if result.timed_out or result.restarted:
            tb = f"{result.error.get('type')}: {result.error.get('msg')}"
        text = (text + "\n" if text else "") + tb.rstrip()
    if not text.strip():
        text = "Execution successful (no output)."
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[: MAX_OUTPUT_CHARS - 40] + f"\n[output truncated at {MAX_OUTPUT_CHARS} characters]"
    return text
