"""The text of a failure packet as the harness engineer reads it (markdown-like, stable).

The rendering is a pure function of the packet: fixed section order, fixed number formats, no dates, so
the same packet always gives the same bytes. Task ids, task identities and per-task rewards stay in the
packet's JSON (for paired reruns and training rows); the text numbers traces by position instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reharness.failures.codes import FailureCode
from reharness.failures.text import TRIM_MARKER

if TYPE_CHECKING:
    from reharness.failures.packet_model import FailurePacket, PacketTrace, TraceStep

_INDENT = "    "


def render_packet(packet: FailurePacket) -> str:
    """The prompt text of ``packet`` (header, instructions, code legend, then every trace)."""
    h, row = packet.header, packet.row
    lines = [
        f"# Failure packet: {h.benchmark}",
        "",
        f"Source run: {h.source_run}",
        f"Target policy: {row.target_policy} (harness {row.harness_id})",
        f"Batch: {row.batch_size} episodes, baseline pass rate {row.baseline_pass_rate:.1%}, "
        f"mean reward {row.baseline_mean_reward:.3f}",
        f"Failures: {h.failures_found} found, {h.failures_included} shown (selection: {h.strategy})",
    ]
    if h.code_counts:
        lines.append("Failure codes among all failures: " + _pairs(h.code_counts))
    lines += ["", "## Instructions", *(f"- {text}" for text in h.instructions)]
    present = [c for c in FailureCode if c.value in h.code_counts]
    if present:
        lines += ["", "## Failure codes", *(f"- {c.value}: {c.description}" for c in present)]
    marker = TRIM_MARKER.strip().format(n="N")
    lines += ["", "## Conventions", f"- Long texts keep their head and tail around '{marker}'."]
    if any(t.masked.get("product_ids") for t in packet.traces):
        lines.append("- Product ids are masked as <product-N> (numbered per trace).")
    if any(t.masked.get("answers") for t in packet.traces):
        lines.append("- Committed answers keep their shape; values are masked as <number> or <text>.")
    if not packet.traces:
        lines += ["", "No failures in this batch."]
    for trace in packet.traces:
        lines += ["", *_trace(trace, len(packet.traces))]
    return "\n".join(lines) + "\n"


def _trace(trace: PacketTrace, total: int) -> list[str]:
    lines = [
        f"## Trace {trace.position}/{total} (task type: {trace.task_type or '-'})",
        f"Outcome: reward {trace.reward:.2f}, termination {trace.termination}, turns {trace.turns}",
        "Failure codes: "
        + (
            ", ".join(f"{code} ({_steps(trace.evidence.get(code, []))})" for code in trace.failure_codes)
            or "none"
        ),
        "Signals: " + _pairs(trace.signals),
        *_block("Instruction", trace.instruction, "", _INDENT),
        *_block("Initial observation", trace.initial_observation, "", _INDENT),
        "Transcript:",
    ]
    for step in trace.transcript:
        lines += _step(step)
    return lines


def _step(step: TraceStep) -> list[str]:
    if step.reply:
        head = _block(f"[{step.step}] assistant", step.reply, "", _INDENT * 2)
    else:
        why = "no reply; action from the harness" if step.source == "hook" else "no reply"
        head = [f"[{step.step}] ({why})"]
    lines = list(head)
    if step.action is not None:
        lines += _block("executed", step.action, _INDENT, _INDENT * 2)
    lines += _block("observation", step.observation, _INDENT, _INDENT * 2)
    if step.flags:
        lines.append(f"{_INDENT}flags: {', '.join(step.flags)}")
    if step.note:
        lines += _block("note", step.note, _INDENT, _INDENT * 2)
    return lines


def _block(label: str, text: str, indent: str, continuation: str) -> list[str]:
    """``label: first line`` at ``indent``; further lines of ``text`` at ``continuation``."""
    first, *rest = (text or "").split("\n")
    return [f"{indent}{label}: {first}".rstrip(), *(f"{continuation}{line}".rstrip() for line in rest)]


def _pairs(values: dict[str, int] | dict[str, int | float]) -> str:
    return ", ".join(f"{k}={_num(v)}" for k, v in sorted(values.items()))


def _num(value: int | float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.2f}"


def _steps(indices: list[int]) -> str:
    """``steps 3-5, 9`` from ``[3, 4, 5, 9]``."""
    if not indices:
        return "episode"
    spans: list[str] = []
    start = prev = indices[0]
    for i in [*indices[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ("step " if len(indices) == 1 else "steps ") + ", ".join(spans)
