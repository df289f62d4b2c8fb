"""The prompted engineer's prompt: hook API, ``ctx`` schema, effect rules, validation rules, reply format.

Everything that can be derived from the code is: the hook points and their allowed returns come from
:data:`reharness.runtime.effects.ALLOWED_EFFECTS`, the validation rules from :mod:`reharness.patches.policy`,
the honoured effects from the environment class, and the ``ctx`` schema from real ``ctx`` data — a few short
random rollouts of the environment through :func:`reharness.runtime.context.build_ctx_data`, the function the
runtime builds every hook's ``ctx`` with — so the prompt names exactly the fields hooks will see. The schema
shows types, never values, so nothing task-specific reaches the prompt from it. The system message is a pure
function of the environment (cached); the user message is :func:`~reharness.failures.render_packet`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from reharness.core.types import Message
from reharness.patches.model import HARNESS_R1_SCHEMA, MAX_R1_ACTIONS
from reharness.patches.policy import (
    ALLOWED_MODULES,
    FORBIDDEN_NAMES,
    NODE_FIXES,
    SAFE_BUILTINS,
    ValidationLimits,
)
from reharness.runtime.effects import (
    ALLOWED_EFFECTS,
    HARNESS_R1_ALIASES,
    HOOK_POINTS,
    MAX_SKILLS,
    MAX_TEXT_CHARS,
)
from reharness.runtime.r1.factory import r1_benchmark

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket

#: Dicts expanded field by field in the schema (records); other dicts are shown as ``dict[str, T]``.
RECORDS = frozenset({"state", "task", "counters", "action", "history[]"})
SCHEMA_TASKS = 8
SCHEMA_STEPS = 3
_R1_NAME = {point: name for name, point in HARNESS_R1_ALIASES.items()}
WHEN = {
    "on_init": "once, at episode start",
    "before_decision": "before each model decision",
    "before_action": "after the model proposes an action (ctx.action), before the environment runs it",
    "after_feedback": "after the environment's feedback for an executed action",
}
SHAPES = {
    "context": '{"skills": [{"text": "..."}], "tool_hint": "..."}  (skills are added to the system prompt)',
    "message": '{"message": "..."}  (appended to the next user message)',
    "block": '{"type": "block_and_prompt", "message": "..."}  (the action is not executed; the message '
    "is shown as its observation)",
    "rewrite": '{"type": "rewrite_action", "action": "..."}  (execute this action instead)',
    "force": '{"type": "force_action", "action": "..."}  (before_action: run this action instead; '
    "after_feedback: run it as the next action without asking the model)",
    "hint": '{"type": "inject_hint", "message": "..."}  (appended to the feedback the model reads)',
}
FIELD_NOTES = {
    "env": "environment name",
    "observation": "the latest observation text",
    "step": "decisions executed so far",
    "max_step": "step limit of the episode",
    "remaining_steps": "max_step - step",
    "admissible": "the admissible actions now (null where the environment has none)",
    "task": "what the task states (never the answer)",
    "counters": "runtime counters kept by the harness",
    "history": "the last 8 executed steps",
    "last_reward": "reward of the last step",
    "action": "the proposed action (only in before_action; null elsewhere)",
    "action.text": "the action the environment would run",
    "action.raw": "the model's reply",
    "action.tool": "the tool called (tools protocol), else null",
}
EXAMPLE_CODE = (
    "def hook(ctx, nb):\n"
    '    counters = ctx.get("counters") or {}\n'
    '    if (counters.get("invalid_streak") or 0) == 0:\n'
    "        return None\n"
    '    nb["hints"] = nb.get("hints", 0) + 1\n'
    '    return {"type": "inject_hint", "message": "That action failed. Try a different one."}\n'
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float | str):
        return type(value).__name__
    if isinstance(value, list | tuple):
        items = sorted({_kind(v) for v in value})
        return f"list[{' | '.join(items)}]" if items else "list"
    if isinstance(value, Mapping):
        items = sorted({_kind(v) for v in value.values()})
        return f"dict[str, {' | '.join(items)}]" if items else "dict"
    return type(value).__name__


def _collect(
    data: Mapping[str, Any], prefix: str, kinds: dict[str, set[str]], counts: dict[str, int]
) -> None:
    """Record the type of every field under ``prefix``; ``counts`` counts fields and expanded records."""
    counts[prefix] = counts.get(prefix, 0) + 1
    for key, value in data.items():
        path = f"{prefix}{key}"
        counts[path] = counts.get(path, 0) + 1
        name = path.rsplit(".", 1)[-1]
        if isinstance(value, Mapping) and name in RECORDS:
            kinds.setdefault(path, set()).add("object")
            _collect(value, path + ".", kinds, counts)
        elif (
            isinstance(value, list) and f"{name}[]" in RECORDS and all(isinstance(v, Mapping) for v in value)
        ):
            kinds.setdefault(path, set()).add("list[object]")
            for item in value:
                _collect(item, path + "[].", kinds, counts)
        else:
            kinds.setdefault(path, set()).add(_kind(value))


def sample_ctx(env_name: str, tasks: int = SCHEMA_TASKS, steps: int = SCHEMA_STEPS) -> list[dict[str, Any]]:
    """Real ``ctx`` data of short seeded random rollouts of ``env_name`` (train split), as hooks see it."""
    from reharness.envs import make_env
    from reharness.runtime.context import Counters, build_ctx_data

    env = make_env(env_name, split="train")
    samples: list[dict[str, Any]] = []
    try:
        for index in range(tasks):
            rng = random.Random(index)
            observation, info = env.reset(seed=index, options={"task": env.get_task(index)})
            counters = Counters(last_observation=observation)
            history: list[dict[str, Any]] = []
            for step in range(steps):
                data = build_ctx_data(
                    env,
                    observation=observation,
                    step=step,
                    max_steps=env.max_steps,
                    counters=counters,
                    history=history,
                    admissible=info.get("admissible_actions"),
                )
                action = env.random_action(rng)
                samples.append(data)
                proposed = {"text": action, "raw": f"Action: {action}", "tool": None}
                samples.append(data | {"action": proposed | env.action_fields(action)})
                observation, reward, terminated, truncated, info = env.step(action)
                counters.on_executed(action, observation, bool(info.get("invalid_action")))
                history.append({"action": action, "observation": observation[:300], "reward": float(reward)})
                if terminated or truncated:
                    break
    finally:
        env.close()
    return samples


@lru_cache(maxsize=16)
def ctx_schema(env_name: str) -> tuple[tuple[str, str, bool], ...]:
    """``(path, type, always present)`` of every ``ctx`` field seen in :func:`sample_ctx`."""
    samples = sample_ctx(env_name)
    kinds: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for data in samples:
        _collect(data, "", kinds, counts)
    tops = list(dict.fromkeys(path.split(".")[0].split("[")[0] for path in kinds))
    rows = []
    for path, found in sorted(kinds.items(), key=lambda kv: tops.index(kv[0].split(".")[0].split("[")[0])):
        record = path[: path.rfind(".") + 1]  # "" for top-level fields, "state." for state.page_type
        present = counts[path] >= counts[record]
        # an empty container says nothing about its items when a non-empty one was seen
        found = {
            k for k in found if k not in ("list", "dict") or not any(f.startswith(k + "[") for f in found)
        }
        has_null = "null" in found and len(found) > 1
        kind = " | ".join(sorted(found - {"null"})) + (" | null" if has_null else "")
        rows.append((path, kind or "null", present))
    return tuple(rows)


def _schema_lines(env_name: str) -> list[str]:
    lines = []
    for path, kind, present in ctx_schema(env_name):
        note = FIELD_NOTES.get(path, "")
        optional = "" if present else " (not always present)"
        lines.append(f"- ctx.{path}: {kind}{optional}" + (f" — {note}" if note else ""))
    return lines


@lru_cache(maxsize=16)
def system_prompt(env_name: str) -> str:
    """The engineer's instructions for ``env_name`` (hook API, ctx schema, effect and validation rules)."""
    from reharness.envs import make_env

    env = make_env(env_name, split="train")
    honoured_raw = getattr(env, "honoured_effects", None)
    admissible_only = bool(getattr(env, "restrict_forced_to_admissible", False))
    env.close()
    limits = ValidationLimits()
    lines = [
        "You are a harness engineer. A frozen agent ran a batch of tasks in the "
        f"'{env_name}' environment (Harness-R1 benchmark '{r1_benchmark(env_name)}') and failed some of "
        "them. "
        "You do not change the agent; you write an overlay patch: small Python hook functions that the "
        "agent's harness runs at fixed points of every episode. The patch is rerun on the same tasks and "
        "scored by how much it raises the success rate; an invalid patch scores 0.",
        "",
        "## Hook points",
    ]
    for point in HOOK_POINTS:
        lines.append(f"- {_R1_NAME[point]} ({WHEN[point]}) may return None or:")
        lines += [f"    {SHAPES[kind]}" for kind in sorted(ALLOWED_EFFECTS[point])]
    honoured = sorted(honoured_raw | {"context", "message"}) if honoured_raw is not None else None
    lines += [
        "",
        "## Effect rules",
        "- Each hook's code defines exactly `def hook(ctx, nb):` and at most "
        f"{limits.max_helpers} helper functions. `ctx` is a read-only view of the runtime state "
        "(ctx['x'], ctx.x or ctx.get('x'); lists are tuples); `nb` is a dict notebook kept for the whole "
        "episode and shared by all hooks of the patch. Only the returned value acts.",
        f"- Messages, hints and actions are non-empty strings of at most {MAX_TEXT_CHARS} characters; "
        f"at most {MAX_SKILLS} skills.",
        "- A hook that raises, times out or returns anything else has no effect (the episode goes on).",
        "- Block or force only on a clearly observable condition; otherwise prefer a hint.",
    ]
    if honoured is not None:
        dropped = sorted({"block", "rewrite", "force", "hint"} - set(honoured))
        lines.append(
            f"- This environment honours only these effects: {', '.join(honoured)}; "
            f"{', '.join(dropped)} effects are dropped."
        )
    if admissible_only:
        lines.append("- Rewritten or forced actions that are not in ctx.admissible are dropped.")
    lines += ["", f"## ctx fields ({env_name}; types observed in real episodes)", *_schema_lines(env_name)]
    lines += [
        "",
        "## Validation rules (a patch breaking any of them is rejected)",
        f"- Builtins available: {', '.join(SAFE_BUILTINS)}.",
        f"- Modules that may be imported: {', '.join(ALLOWED_MODULES)} (nothing else).",
        f"- Never use: {', '.join(sorted(FORBIDDEN_NAMES))}.",
        f"- Not allowed: {', '.join(sorted(NODE_FIXES))}, decorators, annotations, nested functions, "
        "names or attributes starting with '_', '__' inside strings, `except` other than "
        "`except Exception:`, module-level code other than imports and constant assignments.",
        f"- Limits per hook: {limits.max_hook_chars} characters, {limits.max_nodes} AST nodes, nesting depth "
        f"{limits.max_depth}, string literals of at most {limits.max_string_chars} characters; all hooks "
        f"together at most {limits.max_total_bytes} bytes.",
        "- Never copy task ids, product ids, answers or numbered object instances (like 'mug 1') from the "
        "traces: the patch must work on unseen tasks. Read what you need from ctx.",
        "",
        "## Reply format",
        "Think first inside <think>...</think>, then give the patch as JSON inside <patch>...</patch>:",
        f'schema_version "{HARNESS_R1_SCHEMA}", benchmark "{r1_benchmark(env_name)}", a description, and '
        f'"actions": a list of {{"type": "add_code_hook", "hook": HOOK, "code": CODE}} (at most '
        f"{MAX_R1_ACTIONS}; each hook at most once). Example:",
        "<think>Several episodes repeat failed actions.</think>",
        "<patch>" + json.dumps(example_patch(env_name), ensure_ascii=False) + "</patch>",
    ]
    return "\n".join(lines) + "\n"


def example_patch(env_name: str) -> dict[str, Any]:
    """The small example patch shown in the prompt (valid for every environment)."""
    return {
        "schema_version": HARNESS_R1_SCHEMA,
        "benchmark": r1_benchmark(env_name),
        "description": "After a failed action, tell the agent to try a different one.",
        "actions": [{"type": "add_code_hook", "hook": "on_post_step", "code": EXAMPLE_CODE}],
    }


def build_messages(packet: FailurePacket) -> tuple[Message, ...]:
    """The chat messages of one engineer request for ``packet``."""
    from reharness.failures.render import render_packet

    task = (
        "\nWrite one patch that fixes the most important recurring failure mode above. Reply with "
        "<think>...</think><patch>{...}</patch>."
    )
    return (
        Message(role="system", content=system_prompt(packet.header.benchmark)),
        Message(role="user", content=render_packet(packet) + task),
    )
