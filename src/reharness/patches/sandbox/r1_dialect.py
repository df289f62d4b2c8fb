"""The ``r1`` dialect inside the sandbox worker: Harness-R1's ctx class, namespace and line budget.

Standard library only and loaded by path from :mod:`.worker` (which must never import ``reharness``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Joins the code blocks of a hook name repeated in one Harness-R1 patch (upstream runs each, in order,
#: each compiled on its own); a worker in the ``r1`` dialect splits on it.
BLOCK_SEPARATOR = "\n# --- harness-r1: next add_code_hook block for this hook ---\n"


def split_blocks(source: str) -> list[str]:
    """The code blocks of one hook's source (one unless the patch repeated the hook)."""
    return [block.strip("\n") + "\n" for block in source.split(BLOCK_SEPARATOR)]


def run_blocks(
    run_hook: Callable[..., tuple[bool, Any, str]],
    fns: list[Any],
    view: Callable[[Any], Any],
    ctx: Any,
    nb: dict[str, Any],
    stdout_cap: int,
    line_budget: int | None,
) -> tuple[bool, Any, str]:
    """Call every block of a repeated hook in order, each on its own ctx copy and line budget; the result
    ``{"r1_blocks": [{"ok": True, "value": v} | {"ok": False, "error": info}, ...]}`` keeps them apart."""
    blocks, outs = [], []
    for fn in fns:
        ok, value, out = run_hook(fn, view(ctx), nb, stdout_cap, line_budget)
        outs.append(out)
        blocks.append({"ok": True, "value": value} if ok else {"ok": False, "error": value})
    return True, {"r1_blocks": blocks}, "".join(outs)[:stdout_cap]


class R1Ctx(dict):  # type: ignore[type-arg]
    """Harness-R1's ``ctx``: a plain dict subclass that also allows attribute reads (``ctx.state.x``).

    It is a fresh deep copy per call (decoded from the frame), so hooks may mutate it without effect; a
    missing key read as an attribute raises ``AttributeError`` (the official hook then yields nothing).
    """

    __slots__ = ()

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def r1_view(value: Any) -> Any:
    """Convert decoded JSON recursively: dicts become :class:`R1Ctx`, lists stay lists (official rule)."""
    if type(value) is dict:
        return R1Ctx({k: r1_view(v) for k, v in value.items()})
    if type(value) is list:
        return [r1_view(v) for v in value]
    return value


class LineBudgetExceeded(BaseException):
    """Raised into an r1 hook past its line budget; a BaseException so ``except Exception`` cannot eat it."""


def r1_globals() -> dict[str, Any]:
    """What Harness-R1 pre-injects into every hook namespace: ``re``, ``math`` and ``SequenceMatcher``."""
    import difflib
    import math
    import re

    return {"re": re, "math": math, "SequenceMatcher": difflib.SequenceMatcher}


def line_tracer(budget: int) -> Callable[..., Any]:
    """A ``sys.settrace`` function counting "line" events of every frame; past ``budget`` it aborts the hook.

    Harness-R1 charges library code the hook calls too (a ``SequenceMatcher`` ratio can exceed 2000 lines).
    """
    left = [budget]

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            left[0] -= 1
            if left[0] < 0:
                raise LineBudgetExceeded(f"the hook ran more than {budget} lines (Harness-R1's line budget)")
        return local

    def trace(frame: Any, event: str, arg: Any) -> Any:
        return local

    return trace
