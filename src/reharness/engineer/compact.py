"""Prompt styles of the engineer: the full Harness-R1 prompt, or a compact one for small-context engineers.

The full prompt (:func:`reharness.engineer.prompts.build_messages`) spells out the hook API, the ``ctx``
schema and the validation rules, and renders the whole failure packet (up to ~18k tokens): right for a 9B
engineer, far beyond the context of a tiny engineer trained from scratch on a CPU. The compact style keeps
what a learned engineer needs to choose a repair — environment, batch outcome, failure-code counts, runtime
signals and a few one-line transcript steps per trace — within ``max_chars`` characters (traces and steps
are added in packet order until the budget is spent, so the text is a pure function of packet and budget).

The compact style has two reply languages: Harness-R1's hook code, or a repair program
(:mod:`reharness.engineer.program`: a few dozen tokens, compiled by the host), which is what the built-in
tiny engineer writes. A trained engineer's model directory records its style in :data:`ENGINEER_FILE`
(written by ``reharness train engineer``), so ``--engineer hf:PATH`` prompts it exactly as it was trained.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from reharness.core.types import Message

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket, PacketTrace

#: File in a trained engineer's model directory that records how to prompt it.
ENGINEER_FILE = "engineer.json"
ENGINEER_SCHEMA = "reharness-engineer-v1"
TASK_LINE = (
    "Write one patch for the most important recurring failure. Reply <think>...</think><patch>{...}</patch>."
)
PROGRAM_TASK_LINE = "Write one repair program for the recurring failures. Reply <program>...</program>."


class PromptStyle(BaseModel):
    """How an engineer is prompted: ``full`` (Harness-R1's prompt) or ``compact`` (``max_chars`` budget)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["full", "compact"] = "full"
    max_chars: int = Field(1500, gt=200, description="Budget of the compact user message, in characters.")
    step_chars: int = Field(70, gt=10, description="Characters of an action or observation in a step line.")
    max_new_tokens: int | None = Field(None, gt=0, description="Reply budget the engineer was trained for.")
    language: Literal["hooks", "program"] = Field(
        "hooks",
        description="What the engineer replies: free-form hook code (<patch>) or a repair program "
        "(<program>, compact prompts only; reharness.engineer.program).",
    )


def build_prompt(packet: FailurePacket, style: PromptStyle | None = None) -> tuple[Message, ...]:
    """The engineer's chat messages for ``packet`` in ``style`` (default: the full prompt)."""
    if style is None or style.kind == "full":
        from reharness.engineer.prompts import build_messages

        return build_messages(packet)
    env = packet.header.benchmark
    if style.language == "program":
        task = PROGRAM_TASK_LINE
        system = program_system(env)
    else:
        task, system = TASK_LINE, compact_system(env)
    return (
        Message(role="system", content=system),
        Message(role="user", content=compact_packet(packet, style.max_chars, style.step_chars, task)),
    )


def compact_system(env: str) -> str:
    """The compact system message (a pure function of the environment)."""
    from reharness.engineer.prompts import r1_benchmark

    return (
        f"You are a harness engineer for the '{env}' environment (benchmark '{r1_benchmark(env)}'). "
        "Write an overlay patch: Python hooks on_init, make_pre_hint, on_before_action or on_post_step, each "
        "`def hook(ctx, nb)`, that fix the agent's recurring failure. Reply <think>...</think> then "
        "<patch>{harness-r1-patch-v1 JSON}</patch>."
    )


def program_system(env: str) -> str:
    """The compact system message of an engineer that replies in repair programs (a function of the env)."""
    from reharness.engineer.program import language_help

    return (
        f"You are a harness engineer for the '{env}' environment. Choose the repairs that fix the agent's "
        "recurring failures; the host compiles them into hooks.\n" + language_help(env)
    )


def _one_line(text: str | None, limit: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "~"


def _trace_lines(trace: PacketTrace, step_chars: int) -> tuple[list[str], list[str]]:
    """The head lines of a trace and its one-line steps."""
    signals = ", ".join(f"{k}={v}" for k, v in sorted(trace.signals.items()) if v)
    head = [
        f"## trace {trace.position} ({trace.task_type or '-'}): reward {trace.reward:.2f}, "
        f"{trace.termination}, {trace.turns} turns",
        "codes: " + (", ".join(trace.failure_codes) or "none") + (f"; signals: {signals}" if signals else ""),
        "task: " + _one_line(trace.instruction, step_chars * 2),
    ]
    steps = []
    for step in trace.transcript:
        action = step.action if step.action is not None else step.reply.strip().splitlines()[-1:] or [""]
        text = action if isinstance(action, str) else action[0]
        flags = f" [{','.join(step.flags)}]" if step.flags else ""
        obs = _one_line(step.observation, step_chars)
        steps.append(f"{step.step}> {_one_line(text, step_chars)} => {obs}{flags}")
    return head, steps


def compact_packet(
    packet: FailurePacket, max_chars: int = 1500, step_chars: int = 70, task_line: str = TASK_LINE
) -> str:
    """The packet in at most ``max_chars`` characters (header always; traces and steps while they fit),
    ending with ``task_line``."""
    h, row = packet.header, packet.row
    codes = ", ".join(f"{k}={v}" for k, v in sorted(h.code_counts.items())) or "none"
    lines = [
        f"# failures in {h.benchmark}: {h.failures_found} of {row.batch_size} episodes "
        f"(pass rate {row.baseline_pass_rate:.0%})",
        f"codes: {codes}",
    ]
    used = sum(len(line) + 1 for line in lines) + len(task_line) + 1
    for trace in packet.traces:
        head, steps = _trace_lines(trace, step_chars)
        cost = sum(len(line) + 1 for line in head)
        if used + cost > max_chars:
            break
        lines += head
        used += cost
        for line in steps:
            if used + len(line) + 1 > max_chars:
                break
            lines.append(line)
            used += len(line) + 1
    lines.append(task_line)
    return "\n".join(lines)


def style_of_model_dir(path: str | Path) -> PromptStyle | None:
    """The prompt style recorded in a trained engineer's model directory (``None``: not an engineer dir)."""
    file = Path(path).expanduser() / ENGINEER_FILE
    if not file.is_file():
        return None
    data = json.loads(file.read_text(encoding="utf-8"))
    return PromptStyle.model_validate(data.get("prompt_style") or {})


def compact_reply(reply: str) -> str:
    """A teacher reply with its thinking cut to the patch's description (same patch, same format).

    A tiny engineer cannot reliably copy the teacher's packet-specific thinking (counts, code lists); trained
    on it, it drifts and never reaches the ``<patch>`` block. Cut to the description, the reply is a fixed
    text per repair, and the engineer's job becomes choosing the repair for the packet."""
    from reharness.engineer.base import render_reply
    from reharness.patches.reply import extract_patch

    patch = extract_patch(reply)
    return render_reply(patch, f"Repair: {patch.description}")
