"""``reharness show``'s episode filters and one episode's steps, printed in the terminal.

``--failed`` and ``--code CODE`` choose which episodes the listing holds; ``--task ID`` prints one episode
step by step: the raw reply, the parsed and the executed action, the hook effects by hook point, hook
errors, the observation, the reward and the flags (long texts cut to ``--width`` characters).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from reharness.cli.common import stdout
from reharness.core.errors import ConfigError
from reharness.failures.codes import FailureCode
from reharness.failures.detectors import detect
from reharness.store.records import EpisodeRecord


def parse_code(value: str) -> FailureCode:
    """A failure code given on the command line; an error that lists the codes when it is not one."""
    try:
        return FailureCode(value)
    except ValueError:
        known = ", ".join(c.value for c in FailureCode)
        raise ConfigError(f"--code {value!r} is not a failure code", hint=f"use one of: {known}") from None


def select_episodes(
    episodes: Sequence[EpisodeRecord], failed: bool, code: FailureCode | None
) -> list[EpisodeRecord]:
    """The episodes that pass the filters (``failed``: not successful; ``code``: detected with that code)."""
    chosen = [e for e in episodes if not (failed and e.success)]
    if code is not None:
        chosen = [e for e in chosen if code in detect(e)]
    return chosen


def find_episode(episodes: Sequence[EpisodeRecord], task: str) -> EpisodeRecord:
    """The episode of task ``task`` (a task id, or an episode index); a clear error when none matches."""
    for e in episodes:
        if e.task_id == task or (task.isdigit() and e.episode_index == int(task)):
            return e
    sample = ", ".join(e.task_id for e in episodes[:3])
    raise ConfigError(
        f"no episode of task {task!r} in this run",
        hint=f"pass a task id from `reharness show RUN --episodes N` (e.g. {sample}) or an episode index",
    )


def _cut(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _effect_text(effect: dict[str, object]) -> str:
    return _cut(str(effect.get("action") or effect.get("message") or ""), 80)


def print_episode(episode: EpisodeRecord, width: int = 160) -> None:
    """One episode's header and its steps, one block per step."""
    codes = ", ".join(c.value for c in detect(episode)) or "none"
    stdout.print(
        f"[bold]episode {episode.episode_index}[/]  task={episode.task_id}  type={episode.task_type}  "
        f"success={episode.success}  score={episode.score:.3f}  steps={episode.num_steps}  "
        f"termination={episode.termination}  failure codes: {codes}",
        highlight=False,
    )
    stdout.print(f"task: {_cut(episode.instruction, width)}", highlight=False, markup=False)
    if episode.error:
        stdout.print(f"error: {_cut(episode.error, width)}", highlight=False, markup=False)
    table = Table(show_lines=True)
    for col in ("#", "reply → action", "hook effects", "observation", "reward", "flags"):
        table.add_column(col, overflow="fold")
    for step in episode.steps:
        reply = step.output.text if step.output is not None else ""
        lines = [f"reply: {_cut(reply, width)}" if reply else f"({step.source})"]
        lines.append(
            f"parsed: {step.parsed_action}"
            if step.parse_error is None
            else f"parse error: {step.parse_error}"
        )
        if step.action is not None and step.action != step.parsed_action:
            lines.append(f"executed: {step.action}")
        effects = [
            f"{e.get('point')}: {e.get('kind', e.get('type'))} {_effect_text(e)}" for e in step.effects
        ]
        effects += [f"dropped {e.get('point')}: {e.get('kind', e.get('type'))}" for e in step.dropped_effects]
        effects += [
            f"ERROR {h.point} ({h.overlay}): {h.error_type}: {_cut(h.message, 80)}" for h in step.hook_errors
        ]
        table.add_row(
            str(step.index),
            "\n".join(lines),
            "\n".join(effects),
            _cut(step.observation, width),
            f"{step.reward:g}",
            ", ".join(step.flags),
        )
    stdout.print(table)
