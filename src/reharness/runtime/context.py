"""Prompt building and the ``ctx`` given to hooks.

:class:`Conversation` keeps the chat messages of one episode and renders the window the policy sees.
:class:`Counters` tracks the runtime signals Harness-R1 exposes (repeated actions, error streaks, no-ops);
:func:`build_ctx` assembles the read-only ``ctx`` from them, the environment's own runtime state and the
task fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reharness.core.env_protocol import TextEnvLike
from reharness.core.hashing import derive_seed, stable_hash
from reharness.core.types import Message, ToolCall
from reharness.runtime.harness import HarnessConfig
from reharness.runtime.r1.hooks import system_additions


def context_digest(messages: Iterable[Message]) -> str:
    """Digest of the messages a policy is shown (stored as ``StepRecord.context_digest``)."""
    return stable_hash([m.model_dump(mode="json") for m in messages])


def request_seed(episode_seed: int, step_index: int) -> int:
    """Seed of the policy request at ``step_index`` of an episode (same seeds ⇒ same requests)."""
    return derive_seed(episode_seed, step_index)


@dataclass
class Counters:
    """Runtime signals maintained by the harness, exposed as ``ctx['counters']``."""

    repeated_action: int = 0  # consecutive repeats of the same executed action
    invalid_streak: int = 0  # consecutive invalid actions
    invalid_count: int = 0
    format_errors: int = 0
    format_error_streak: int = 0
    blocked_count: int = 0
    noop_count: int = 0  # steps whose observation equalled the previous one
    hook_errors: int = 0
    last_action: str | None = None
    last_observation: str | None = None

    def on_executed(self, action: str, observation: str, invalid: bool) -> None:
        self.repeated_action = self.repeated_action + 1 if action == self.last_action else 0
        self.invalid_streak = self.invalid_streak + 1 if invalid else 0
        self.invalid_count += int(invalid)
        self.noop_count += int(observation == self.last_observation)
        self.format_error_streak = 0
        self.last_action = action
        self.last_observation = observation

    def on_format_error(self) -> None:
        self.format_errors += 1
        self.format_error_streak += 1


@dataclass
class Conversation:
    """Messages of one episode; the system prompt and first user message are always kept."""

    config: HarnessConfig
    system: str
    head: list[Message] = field(default_factory=list)
    turns: list[list[Message]] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    #: r1-dialect ``on_init`` skills and tool hints (rendered under Harness-R1's own headers)
    tips: list[str] = field(default_factory=list)
    tool_hints: list[str] = field(default_factory=list)

    def messages(self) -> tuple[Message, ...]:
        system = self.system
        if self.skills:
            system += "\n\nHarness notes:\n" + "\n".join(f"- {s}" for s in self.skills)
        system += system_additions(self.tips, self.tool_hints)
        window = self.turns[-self.config.history_window :] if self.config.history_window else self.turns
        out = [Message(role="system", content=system)] if system else []
        out.extend(self.head)
        for turn in window:
            out.extend(turn)
        return tuple(out)

    def add_turn(self, assistant: Message, feedback: Message) -> None:
        self.turns.append([assistant, feedback])

    def add_pending_user_note(self, text: str) -> None:
        """Append a harness message to the latest user-side message (before the next decision)."""
        target = self.turns[-1] if self.turns else self.head
        last = target[-1]
        target[-1] = last.model_copy(update={"content": f"{last.content}\n\n{text}"})


def feedback_message(
    config: HarnessConfig,
    observation: str,
    tool_call: ToolCall | None,
    admissible: list[str] | None,
    notes: list[str],
) -> Message:
    content = config.feedback_template.format(observation=observation)
    if config.show_admissible and admissible:
        content += "\n" + config.admissible_template.format(actions=", ".join(admissible))
    for note in notes:
        content += f"\n\n{note}"
    if config.protocol == "tools" and tool_call is not None:
        return Message(role="tool", content=content, tool_call_id=tool_call.id or "call_0")
    return Message(role="user", content=content)


def build_ctx_data(
    env: TextEnvLike,
    *,
    observation: str,
    step: int,
    max_steps: int,
    counters: Counters,
    history: list[dict[str, Any]],
    admissible: list[str] | None,
    last_reward: float = 0.0,
) -> dict[str, Any]:
    """Assemble the data of ``ctx`` for the current state (``action`` is filled per hook call)."""
    data: dict[str, Any] = dict(env.runtime_state())
    data.update(
        {
            "env": env.name,
            "observation": observation,
            "step": step,
            "max_step": max_steps,
            "remaining_steps": max(0, max_steps - step),
            "admissible": admissible,
            "task": env.task_fields(),
            "counters": {k: v for k, v in vars(counters).items() if k != "last_observation"},
            "history": history[-8:],
            "last_reward": last_reward,
            "action": None,
        }
    )
    return data
