"""Operators that repair replies which yield no action (a pretrained target's dominant failure).

A model never shown the protocol answers in prose, quotes the command, wraps it in markdown or leaks chat-
template tokens ("Sure! You should `go to fridge 1`.<|im_end|>"). The runtime hands such a reply to the
``before_action`` hooks with ``ctx.action.text`` None and ``ctx.action.raw`` the reply
(:mod:`reharness.runtime.repair`); these operators supply the action:

- :class:`LenientExtract`: the first line, or quoted span in it, that names an admissible action (exactly,
  or containing one: the longest wins); with a kit's ``pattern_code`` setting, also what that code finds
  (the WebShop-like kit: a ``search[…]`` / ``click[…]`` written anywhere);
- :class:`SnapFreeText`: the line most similar to an admissible action (difflib), above a cutoff;
- :class:`StripTemplateNoise`: a parsed action wrapped in template tokens, quotes, markdown or a trailing
  full stop is cleaned (a rewrite); an unparsed reply whose cleaned text is one line is taken as the action;
- :class:`ShowOptions`: before every decision from the first reply that yielded no action on (optionally
  from the first decision), a message listing commands the agent can use now — a model that was never shown
  the protocol gets names to copy, which the extraction above then finds in its prose.

They read only ``ctx.action``, ``ctx.admissible``, the counters and the step (no task field), so they pass the
leakage check for any packet. They are generic: they apply wherever the env's kit does not leave them out
(kits whose raw protocol always parses, so that no reply reaches them, leave them out).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from reharness.engineer.operators.base import Fragment, Operator, ParamSpace, fill

_TOKENS = r"<\|[^|>\n]{0,40}\|>|</?s>"
_PREFIX = r"^[\s>*#\-\d.)]*(?:(?:action|command|answer|assistant|next action)\s*[:\-]\s*)?"


def _clean(var: str) -> str:
    """The expression (patch code) of ``var`` cleaned: template tokens and markdown stripped, a prefix such
    as "Action:" dropped, whitespace collapsed (inline: a patch may not nest functions)."""
    inner = f"re.sub({_PREFIX!r}, '', re.sub({_TOKENS!r}, ' ', {var}), flags=re.I)"
    return f"' '.join({inner}.strip().strip('*`\\'\".').split())"


EXTRACT = """
def lenient_extract(ctx, nb):
    action = ctx.get("action") or {}
    if action.get("text") is not None:
        return None
    raw = str(action.get("raw") or "")[:2000]
    options = [str(a) for a in (ctx.get("admissible") or [])][:300]
    lookup = {" ".join(o.lower().split()): o for o in options}
    for line in raw.splitlines()[:40]:
        spans = [s for group in re.findall(r'"([^"]{1,200})"|`([^`]{1,200})`|\\*\\*([^*]{1,200})\\*\\*', line)
                 for s in group if s]
        for candidate in spans + [line]:
            text = (<<CLEAN_CANDIDATE>>).lower()
            if text in lookup:
                nb["extracted"] = nb.get("extracted", 0) + 1
                return {"type": "rewrite_action", "action": lookup[text]}
<<PATTERN>><<CONTAINS>>    return None
"""
CONTAINS = """        words = re.sub(r"[^\\w\\[\\]\\- ]", " ", (<<CLEAN_LINE>>).lower())
        padded = " " + " ".join(words.split()) + " "
        named = [o for k, o in lookup.items() if " " + k + " " in padded]
        if named:
            nb["extracted"] = nb.get("extracted", 0) + 1
            return {"type": "rewrite_action", "action": max(named, key=len)}
"""


class _UnparsedReply(Operator):
    """What the repairs of replies that yield no action share: the failure they address, generic."""

    codes = ("format_error",)
    generic = True
    signals = ("format_errors",)


class LenientExtract(_UnparsedReply):
    name = "lenient_extract"
    summary = "Take the first line or quoted span of an unparsed reply that names an admissible action"
    priority = 12

    def space(self, env: str) -> ParamSpace:
        return {"match": ("contains", "exact")}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        parts = {
            "PATTERN": str(self.settings(env).get("pattern_code", "")),
            "CONTAINS": CONTAINS if params["match"] == "contains" else "",
        }
        parts |= {"CLEAN_CANDIDATE": _clean("candidate"), "CLEAN_LINE": _clean("line")}
        return {"before_action": Fragment("lenient_extract", fill(EXTRACT, parts), ("re",))}


SNAP_FREE = """
def snap_free_text(ctx, nb):
    action = ctx.get("action") or {}
    if action.get("text") is not None:
        return None
    raw = str(action.get("raw") or "")[:2000]
    options = [str(a) for a in (ctx.get("admissible") or [])][:300]
    if not options:
        return None
    best, score = None, 0.0
    for line in raw.splitlines()[:20]:
        text = (<<CLEAN_LINE>>).lower()[:200]
        if not text:
            continue
        for option in options:
            ratio = difflib.SequenceMatcher(None, text, option.lower()).ratio()
            if ratio > score:
                best, score = option, ratio
    if best is None or score < <<cutoff>>:
        return None
    nb["snapped_free"] = nb.get("snapped_free", 0) + 1
    return {"type": "rewrite_action", "action": best}
"""


class SnapFreeText(_UnparsedReply):
    name = "snap_free_text"
    summary = "Rewrite an unparsed reply to the admissible action most similar to one of its lines (difflib)"
    priority = 25
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"cutoff": (0.3, 0.95)}

    def space(self, env: str) -> ParamSpace:
        return {"cutoff": (0.6, 0.5, 0.75)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(SNAP_FREE, {"CLEAN_LINE": _clean("line")}, cutoff=params["cutoff"])
        return {"before_action": Fragment("snap_free_text", code, ("difflib", "re"))}


STRIP = """
def strip_template_noise(ctx, nb):
    action = ctx.get("action") or {}
    text = action.get("text")
    if text is None:
        lines = [<<CLEAN_LINE>> for line in str(action.get("raw") or "")[:2000].splitlines()]
        lines = [line for line in lines if line]
        if len(lines) != 1 or len(lines[0]) > <<longest>>:
            return None
        nb["stripped"] = nb.get("stripped", 0) + 1
        return {"type": "rewrite_action", "action": lines[0]}
    cleaned = <<CLEAN_TEXT>>
    if not cleaned or cleaned == text:
        return None
    nb["stripped"] = nb.get("stripped", 0) + 1
    return {"type": "rewrite_action", "action": cleaned}
"""


class StripTemplateNoise(Operator):
    name = "strip_template_noise"
    summary = "Strip chat-template tokens, quotes, markdown and 'Action:' prefixes around an action"
    codes = ("format_error", "invalid_action")
    generic = True
    signals = ("format_errors", "invalid_actions")
    priority = 14
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"longest": (20, 200)}

    def space(self, env: str) -> ParamSpace:
        return {"longest": (80, 40)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        parts = {"CLEAN_LINE": _clean("line"), "CLEAN_TEXT": _clean("str(text)")}
        code = fill(STRIP, parts, longest=params["longest"])
        return {"before_action": Fragment("strip_template_noise", code, ("re",))}


SHOW = """
def show_options(ctx, nb):
    counters = ctx.get("counters") or {}
    if (counters.get("format_error_streak") or 0) >= 1 or (<<at_start>> and (ctx.get("step") or 0) == 0):
        nb["on"] = True  # from the first reply without an action on, before every decision
    if not nb.get("on"):
        return None
    options = [str(a) for a in (ctx.get("admissible") or [])][:<<shown>>]
    if not options:
        return None
    nb["shown"] = nb.get("shown", 0) + 1
    message = "Reply with one line 'Action: <command>', the command copied exactly from: "
    return {"message": (message + "; ".join(options) + ".")[:900]}
"""


class ShowOptions(_UnparsedReply):
    name = "show_options"
    summary = "From the first reply with no action on (or from the start), list the commands usable now"
    priority = 16
    ranges: ClassVar[Mapping[str, tuple[float, float]]] = {"shown": (3, 30)}

    def space(self, env: str) -> ParamSpace:
        return {"shown": (12, 6, 24), "at_start": (True, False)}

    def fragments(self, params: Mapping[str, Any], env: str) -> dict[str, Fragment]:
        code = fill(SHOW, shown=params["shown"], at_start=params["at_start"])
        return {"before_decision": Fragment("show_options", code)}


LENIENT_OPERATORS: tuple[Operator, ...] = (
    LenientExtract(),
    StripTemplateNoise(),
    SnapFreeText(),
    ShowOptions(),
)
