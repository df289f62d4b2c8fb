"""The engineer interface: :class:`Engineer` proposes patches from a failure packet; :class:`Proposal` is one.

Harness-R1's engineer reads a failure packet and replies ``<think>…</think><patch>{json}</patch>``
(REFERENCE.md §1). Every engineer here returns exactly ``n`` :class:`Proposal` objects: the parsed and
statically validated patch, or ``patch=None`` with the error and a stable ``error_code`` — parse and
validation failures are data to count and report (and score 0 downstream), never exceptions. Each proposal
keeps the raw reply, so proposals can become SFT targets, and ``meta`` records how it was produced
(operators and parameters, sampling seed, model).

:func:`finish_reply` and :func:`finish_patch` are the shared last step of every engineer: parse (replies
only), check the environment, validate with the packet's leakage evidence.
The factory :func:`reharness.engineer.factory.make_engineer` sits above the implementations, so this
interface module imports none of them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reharness.patches.errors import PatchFormatError
from reharness.patches.model import Patch
from reharness.patches.reply import extract_patch
from reharness.patches.validate import validate_patch

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket

#: Error code of a proposal whose patch names another environment than the packet's.
WRONG_ENV = "wrong_env"
#: Error code of a proposal whose model call failed (HTTP error, timeout, backend crash).
BACKEND_ERROR = "backend_error"
#: ``meta["rejected_at"]`` of a rejected reply: the stage that refused it — the reply did not parse into a
#: patch (``parse``), or the patch failed the environment or static checks (``validation``)
PARSE, VALIDATION = "parse", "validation"


@dataclass(frozen=True)
class Proposal:
    """One candidate patch (``None`` when the reply failed to parse or validate) and how it came about."""

    patch: Patch | None
    raw_reply: str
    error: str | None = None
    error_code: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.patch is not None and self.error is None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (the patch as ``reharness-patch-v1``)."""
        return {
            "valid": self.valid,
            "patch": self.patch.to_dict() if self.patch is not None else None,
            "patch_id": self.patch.identity if self.patch is not None else None,
            "raw_reply": self.raw_reply,
            "error": self.error,
            "error_code": self.error_code,
            "meta": json.loads(json.dumps(self.meta, sort_keys=True)),
        }


class Engineer(ABC):
    """Proposes overlay patches from a failure packet."""

    name: str

    @abstractmethod
    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        """Exactly ``n`` proposals for ``packet``, deterministic given ``seed`` (for model engineers: given
        the backend's seeded sampling). Failures are proposals with ``patch=None``; never raises for them."""

    async def close(self) -> None:  # noqa: B027 - optional for engineers without resources
        """Release resources (model backends)."""


def error_counts(proposals: list[Proposal]) -> dict[str, int]:
    """How many proposals failed with each error code (sorted; valid proposals are not counted)."""
    counts: dict[str, int] = {}
    for proposal in proposals:
        if not proposal.valid:
            code = proposal.error_code or "error"
            counts[code] = counts.get(code, 0) + 1
    return dict(sorted(counts.items()))


def render_reply(patch: Patch, thinking: str) -> str:
    """A reply in Harness-R1's format for ``patch`` (exported as ``harness-r1-patch-v1``)."""
    body = json.dumps(patch.to_harness_r1(), ensure_ascii=False)
    return f"<think>\n{thinking.strip()}\n</think>\n<patch>{body}</patch>"


def finish_patch(patch: Patch, raw_reply: str, packet: FailurePacket, meta: dict[str, Any]) -> Proposal:
    """Check ``patch`` against ``packet`` (environment, static rules, leakage) and wrap it as a proposal."""
    env = packet.header.benchmark
    if patch.env is None:
        patch = Patch(dict(patch.hooks), patch.description, env, patch.metadata)
    elif patch.env != env:
        message = f"the patch is for {patch.env!r} but the failure packet is from {env!r}"
        return Proposal(None, raw_reply, message, WRONG_ENV, meta | {"rejected_at": VALIDATION})
    errors = validate_patch(patch, evidence=packet.leakage_evidence())
    if errors:
        message = "; ".join(str(e.message) for e in errors[:5])
        where = f"{errors[0].hook or 'patch'}:{errors[0].line}:{errors[0].col}: "
        return Proposal(None, raw_reply, where + message, errors[0].rule, meta | {"rejected_at": VALIDATION})
    return Proposal(patch.with_metadata(**meta), raw_reply, None, None, meta)


def finish_reply(raw_reply: str, packet: FailurePacket, meta: dict[str, Any]) -> Proposal:
    """Parse a model's reply into a patch, then check it.

    A reply with a ``<program>`` block is a repair program (:mod:`reharness.engineer.program`), compiled
    for the packet's environment; any other reply is free-form hook code
    (:func:`~reharness.patches.reply.extract_patch`). ``meta["language"]`` (and so the patch's metadata)
    records which it was."""
    from reharness.engineer.program import HOOK_LANGUAGE, PROGRAM_LANGUAGE, program_patch, program_text

    try:
        program = program_text(raw_reply)
        meta = meta | {"language": HOOK_LANGUAGE if program is None else PROGRAM_LANGUAGE}
        if program is None:
            patch = extract_patch(raw_reply)
        else:
            patch = program_patch(program, packet.header.benchmark)
            meta["program"] = patch.metadata["program"]
    except PatchFormatError as exc:
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        return Proposal(None, raw_reply, message, exc.code, meta | {"rejected_at": PARSE})
    return finish_patch(patch, raw_reply, packet, meta)
