"""Hooks that repair a reply which yields no action.

A reply that does not parse used to be recorded as ``format_error`` with no hook seeing it, so for a
pretrained target — whose dominant failure is format (SmolLM2-135M: 90 of 90 ALFWorld-like steps) — no patch
could help: only a pre-decision message, which such a model ignores. Now the ``before_action`` hooks of
native overlays also run on such a reply, with ``ctx.action.text`` None and ``ctx.action.raw`` holding the
reply (and the tool call, if any, as JSON after it); a ``rewrite`` or ``force`` effect supplies the action to
execute, a ``block`` returns its message as the feedback of the format error.

**Nothing changes when no hook repairs.** When no overlay returns an effect that applies, the step is
recorded exactly as before: the notebooks are restored to what they were before the call, and the hooks'
errors and dropped effects are discarded (hooks written before this existed may not expect a ``text`` of
None, and their failure here must not change the trajectory of a run that never repaired anything).

The r1 dialect keeps the official semantics: the official runtime runs no hook on a reply without an action,
so r1 overlays are not called here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.core.types import ChatResponse, ToolCall
from reharness.runtime.effects import Effect
from reharness.runtime.view import ReadOnlyView
from reharness.store.records import HookErrorRecord

CallHooks = Callable[..., Awaitable[Any]]


@dataclass
class Repair:
    """What the hooks did with an unparsed reply: an action to execute, or a block message."""

    action: str | None = None
    kind: str = ""  # rewrite | force | block
    blocked: str | None = None
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    effects: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    errors: list[HookErrorRecord] = field(default_factory=list)


def raw_reply(response: ChatResponse, tool_call: ToolCall | None) -> str:
    """The reply a repairing hook reads as ``ctx.action.raw`` (with the tool call, if any, as JSON)."""
    raw = response.text or ""
    if tool_call is not None:
        call = json.dumps({"name": tool_call.name, "arguments": tool_call.arguments}, default=str)
        raw = f"{raw}\n{call}" if raw else call
    return raw[:2000]


async def repair_unparsed(
    call_hooks: CallHooks,
    honoured: Callable[[Effect], str | None],
    ctx_now: Callable[[dict[str, Any] | None], ReadOnlyView],
    notebooks: list[dict[str, Any]],
    response: ChatResponse,
    tool_call: ToolCall | None,
) -> Repair | None:
    """Run the native ``before_action`` hooks on a reply without an action; the repair they make, or
    None (notebooks restored) when no effect applies."""
    saved = copy.deepcopy(notebooks)
    tool = tool_call.name if tool_call else None
    proposed = {"text": None, "raw": raw_reply(response, tool_call), "tool": tool}
    results = await call_hooks("before_action", lambda: ctx_now(proposed), notebooks, None, True)
    repair = Repair(errors=list(results.errors))
    for effect in results.effects:
        why = honoured(effect)
        if why is None and effect.kind != "block" and not effect.action:
            why = "no action to execute"
        if why:
            repair.dropped.append(effect.to_dict() | {"reason": why})
            continue
        repair.effects.append(effect.to_dict())
        repair.kind = effect.kind
        if effect.kind == "block":
            repair.blocked, repair.action = effect.text or "", None
            break
        repair.action = effect.action
        repair.flags.append("rewritten" if effect.kind == "rewrite" else "forced")
        if effect.text:
            repair.notes.append(f"[Harness] {effect.text}")
    if not repair.effects:
        for nb, before in zip(notebooks, saved, strict=True):
            nb.clear()
            nb.update(before)
        return None
    return repair
