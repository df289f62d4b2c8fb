"""No module outside a kit names a specific built-in environment: the core asks the kit registry.

The registry's list of built-ins (``envs/registry.py``) is the one exception. What counts as naming one: a
shipped kit's name (the package's ``reharness.kits`` entry points: ``scienceworld``, the twx games, …), the
words ``household`` / ``shop`` anywhere (code, docstrings, comments), a built-in tiny agent's name
(``db-S``), a kit's module path, the word ``apps``, a quoted ``"db"`` / ``"apps"`` (or ``db`` in
backquotes), an ``env == "code"``-style comparison, and ``--env NAME`` in a hint or help text.
"""

from __future__ import annotations

import re
from pathlib import Path

import reharness
from reharness.envs.registry import BUILTIN_KITS, entry_point_kits

ROOT = Path(reharness.__file__).parent
EXCEPTIONS = {ROOT / "envs" / "registry.py"}
NAMES = "household|shop|db|code|apps"
#: the kits the package ships besides the built-ins (its entry points: twx-twc, scienceworld, bfcl, …)
SHIPPED = sorted(set(entry_point_kits()) - set(BUILTIN_KITS), key=len, reverse=True)
PATTERNS = [
    re.compile(r"\b(" + "|".join(map(re.escape, SHIPPED)) + r")\b"),
    re.compile(r"\b(household|shop)\b", re.IGNORECASE),
    re.compile(rf"\b({NAMES})-(S|M)\b"),
    re.compile(rf"\bkits\.({NAMES})\b"),
    re.compile(r"[\"'](db|apps)[\"']"),
    re.compile(r"\bapps\b|``db``"),
    re.compile(rf"\b(env|env_name|name|benchmark)\s*(==|!=|in)\s*\(?[\"']({NAMES})[\"']"),
    re.compile(rf"--env\s+({NAMES})\b"),  # a hint or help text that sends the user to a built-in
]


def offending_lines() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path in EXCEPTIONS or (ROOT / "kits") in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_module_outside_a_kit_names_a_builtin_environment() -> None:
    assert offending_lines() == []


def test_the_check_sees_a_violation() -> None:
    """The patterns catch the ways the core used to name environments (so the test above can fail)."""
    samples = [
        'if record.env == "shop":',
        "from reharness.kits.db.protocol import x",
        'envs = ("db",)',
        "tiny:household-S",
        'if env_name == "code":',
        'hint="use --agent gold with --env db --data FILE.jsonl"',
        "# twx-twc-S: env twx-twc",
    ]
    assert {"twx-twc", "scienceworld", "bfcl"} <= set(SHIPPED)
    assert all(any(p.search(s) for p in PATTERNS) for s in samples)
    assert not any(p.search('{"type": "add_code_hook", "code": CODE}') for p in PATTERNS)
