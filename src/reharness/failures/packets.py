"""Failure packets: a deterministic digest of a batch's failures for a harness engineer (no model involved).

:func:`extract_packet` takes the episodes of one batch and keeps the failures (score < 1 or not successful),
REFERENCE.md §1:

- **selection**: ``round_robin`` cycles over task types (and, inside a type, over distinct tasks) so every
  failing type is represented; ``lowest_reward`` sorts by final score, ties by (run id, episode index). At
  most ``max_traces`` traces.
- **per trace**: outcome (score, termination, turns), failure codes with their step evidence
  (:mod:`.detectors`), runtime signals (:mod:`.runtime_signals`) and the transcript, with observations and
  replies trimmed head + tail to ``obs_chars`` / ``reply_chars`` and task-specific values masked
  (:mod:`.text`).
- **budget**: tokens are estimated as ``ceil(characters / 4)`` of the rendered text; traces are dropped from
  the end of the selection until the packet fits ``token_budget``. A trace is never cut in half; a packet with
  failures always keeps its first trace, even when that one alone exceeds the budget.
- **row metadata**: batch size, baseline pass rate and per-task rewards of the whole batch, target policy.

Everything is derived from the records in a canonical order, so the same batch always gives byte-identical
JSON (:meth:`FailurePacket.to_json`; the model lives in :mod:`.packet_model`) and text (:func:`render_packet`,
in :mod:`.render`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from reharness.core.errors import ConfigError, DataError
from reharness.envs.registry import find_kit
from reharness.failures.detectors import findings
from reharness.failures.packet_model import (
    FailurePacket,
    LeakageFacts,
    PacketHeader,
    PacketRow,
    PacketTrace,
    TaskReward,
    TraceStep,
)
from reharness.failures.render import render_packet
from reharness.failures.runtime_signals import signals
from reharness.failures.text import Masker, trim
from reharness.store.records import EpisodeRecord, RunMeta, StepRecord

Strategy = Literal["round_robin", "lowest_reward"]
STRATEGIES: tuple[str, ...] = ("round_robin", "lowest_reward")
#: Characters per token of the budget estimate.
CHARS_PER_TOKEN = 4
ENGINEER_INSTRUCTIONS: tuple[str, ...] = (
    "Infer the recurring failure modes behind these traces; fix a mode, not a single trace.",
    "Never encode task ids, product ids, answers or numbered object instances from the traces; "
    "a patch must work on tasks it has not seen.",
    "Prefer small, auditable edits: few hooks, explicit conditions on ctx fields, clear messages.",
    "Block or force an action only on a clearly observable condition; otherwise give a hint.",
)
T = TypeVar("T")


def is_failure(record: EpisodeRecord) -> bool:
    """A packet's notion of failure: not successful, or a final score below 1 (REFERENCE: reward < 1)."""
    return not record.success or record.score < 1.0


def extract_packet(
    records: Sequence[EpisodeRecord],
    *,
    run_meta: RunMeta | None = None,
    max_traces: int = 20,
    token_budget: int = 18_000,
    strategy: Strategy | str = "round_robin",
    obs_chars: int = 1200,
    reply_chars: int = 600,
) -> FailurePacket:
    """Build the failure packet of one batch (see the module docstring)."""
    if strategy not in STRATEGIES:
        raise ConfigError(
            f"unknown packet strategy {strategy!r}", hint=f"use one of: {', '.join(STRATEGIES)}"
        )
    if max_traces < 1 or token_budget < 1 or obs_chars < 1 or reply_chars < 1:
        raise ConfigError(
            "max_traces, token_budget, obs_chars and reply_chars must all be positive",
            hint="e.g. max_traces=20, token_budget=18000, obs_chars=1200, reply_chars=600",
        )
    if not records:
        raise DataError("cannot build a failure packet from an empty batch", hint="run some episodes first")
    ordered = sorted(records, key=lambda r: (r.run_id, r.episode_index))
    envs = sorted({r.env for r in ordered})
    if len(envs) != 1:
        raise DataError(
            f"a failure packet covers one environment, got {', '.join(envs)}",
            hint="build one packet per environment",
        )
    failed = [r for r in ordered if is_failure(r)]
    chosen = _select(failed, strategy)[:max_traces]
    traces = [_trace(i + 1, r, obs_chars, reply_chars) for i, r in enumerate(chosen)]
    code_counts: dict[str, int] = {}
    for record in failed:
        for f in findings(record):
            code_counts[f.code.value] = code_counts.get(f.code.value, 0) + 1
    header = PacketHeader(
        benchmark=envs[0],
        source_run=run_meta.run_id if run_meta else ",".join(sorted({r.run_id for r in ordered})),
        failures_found=len(failed),
        failures_included=len(traces),
        strategy=strategy,
        max_traces=max_traces,
        token_budget=token_budget,
        obs_chars=obs_chars,
        reply_chars=reply_chars,
        code_counts=dict(sorted(code_counts.items())),
        instructions=list(ENGINEER_INSTRUCTIONS),
    )
    packet = FailurePacket(header=header, row=_row(ordered, run_meta), traces=traces, leakage=LeakageFacts())
    keep = len(traces)
    while True:
        trial = _with_traces(packet, keep)
        tokens = approx_tokens(render_packet(trial))
        if tokens <= token_budget or keep <= 1:
            break
        keep -= 1
    trial.header.approx_tokens = tokens
    trial.leakage = _leakage(trial.traces, chosen[:keep])
    return trial


def approx_tokens(text: str) -> int:
    """The budget's token estimate: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _with_traces(packet: FailurePacket, keep: int) -> FailurePacket:
    header = packet.header.model_copy(update={"failures_included": keep})
    return packet.model_copy(update={"header": header, "traces": packet.traces[:keep]})


def _select(failed: list[EpisodeRecord], strategy: str) -> list[EpisodeRecord]:
    if strategy == "lowest_reward":
        return sorted(failed, key=lambda r: (r.score, r.run_id, r.episode_index))
    by_type = _groups(failed, lambda r: r.task_type)
    return _round_robin([_round_robin(_groups(group, lambda r: r.task_id)) for group in by_type])


def _groups(items: list[T], key: Callable[[T], str]) -> list[list[T]]:
    """Items grouped by ``key``; groups in order of first appearance, items in their order."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.values())


def _round_robin(groups: list[list[T]]) -> list[T]:
    out: list[T] = []
    for depth in range(max((len(g) for g in groups), default=0)):
        out.extend(g[depth] for g in groups if depth < len(g))
    return out


def _row(ordered: list[EpisodeRecord], meta: RunMeta | None) -> PacketRow:
    n = len(ordered)
    policies = sorted({r.policy_id for r in ordered})
    harnesses = sorted({r.harness_id for r in ordered})
    return PacketRow(
        benchmark=ordered[0].env,
        source_run=meta.run_id if meta else ",".join(sorted({r.run_id for r in ordered})),
        batch_size=n,
        baseline_pass_rate=sum(r.success for r in ordered) / n,
        baseline_mean_reward=sum(r.score for r in ordered) / n,
        task_rewards=[
            TaskReward(
                episode_index=r.episode_index,
                task_id=r.task_id,
                task_identity=r.task_identity,
                reward=r.score,
                success=r.success,
            )
            for r in ordered
        ],
        target_policy=meta.policy_id if meta else ",".join(policies),
        harness_id=str(meta.harness.get("id", "")) if meta else ",".join(harnesses),
    )


def _trace(position: int, record: EpisodeRecord, obs_chars: int, reply_chars: int) -> PacketTrace:
    mask = Masker(record.env)
    found = findings(record)
    transcript = [_step(s, mask, obs_chars, reply_chars) for s in record.steps]
    initial = trim(mask(record.initial_observation), obs_chars)
    return PacketTrace(
        position=position,
        run_id=record.run_id,
        episode_index=record.episode_index,
        task_id=record.task_id,
        task_identity=record.task_identity,
        task_type=record.task_type,
        instruction=mask(record.instruction),
        reward=record.score,
        termination=record.termination,
        turns=record.num_steps,
        failure_codes=[f.code.value for f in found],
        evidence={f.code.value: list(f.steps) for f in found},
        signals=signals(record),
        initial_observation=initial,
        transcript=transcript,
        masked=mask.counts,
    )


def _step(step: StepRecord, mask: Masker, obs_chars: int, reply_chars: int) -> TraceStep:
    output = step.output
    reply = output.text if output else ""
    if output and output.tool_calls:
        calls = [
            f"{c.name}({json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)})"
            for c in output.tool_calls
        ]
        reply = "\n".join([reply, *calls]) if reply.strip() else "\n".join(calls)
    notes = [step.parse_error] if step.parse_error else []
    notes += [f"hook {e.point} ({e.overlay}): {e.error_type}: {e.message}" for e in step.hook_errors]
    if output and output.error:
        notes.append(f"policy error: {output.error}")
    differs = step.action is not None and step.action != step.parsed_action
    return TraceStep(
        step=step.index,
        source=step.source,
        reply=trim(mask(reply), reply_chars),
        action=trim(mask(step.action or ""), reply_chars) if differs else None,
        observation=trim(mask(step.observation), obs_chars),
        flags=list(step.flags),
        note=trim("; ".join(notes), reply_chars) if notes else None,
    )


def _leakage(traces: list[PacketTrace], records: list[EpisodeRecord]) -> LeakageFacts:
    """Task-specific facts of the included traces (task ids, and what the env's kit lists: ``leakage``)."""
    facts: dict[str, set[str]] = {"product_ids": set(), "object_instances": set()}
    for record in records:
        kit = find_kit(record.env)
        if kit is None or kit.leakage is None:
            continue
        texts = [record.initial_observation, *(s.observation for s in record.steps)]
        texts += [s.action or "" for s in record.steps]
        for text in texts:
            for kind, value in kit.leakage(text):
                if kind not in facts:
                    raise DataError(
                        f"kit {kit.name!r}: leakage names unknown fact kind {kind!r}",
                        hint=f"use one of {sorted(facts)}",
                    )
                facts[kind].add(value)
    return LeakageFacts(
        task_ids=sorted({t.task_id for t in traces}),
        product_ids=sorted(facts["product_ids"]),
        object_instances=sorted(facts["object_instances"]),
    )
