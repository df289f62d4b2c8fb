"""What a page embeds: runs, a compact row per episode, and each episode's steps in one lazily read text.

A page holds every episode a user may open, so a 10,000-episode run must load fast. Each episode is
embedded twice, at two levels of detail:

- a **row** (run index, episode index, task id, task type, outcome, score, steps, termination, failure codes)
  in the page's main JSON, parsed on load, enough for the summary, the chart, the grid and the filters;
- its **steps** as one JSON document inside a single concatenated text (:attr:`PageData.details`), of which
  the page parses only the slice ``offsets[i]:offsets[i+1]`` when the episode is opened. The text is ASCII
  (``ensure_ascii``) so Python's and JavaScript's string offsets agree, and ``<`` is written ``\\u003c`` so
  nothing in it can close the ``<script>`` element holding it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import detect
from reharness.store.records import EpisodeRecord, RunMeta, StepRecord, infrastructure_error

#: a row's columns, in order (the page reads rows by these positions)
ROW_COLUMNS = ("run", "index", "task", "type", "success", "score", "steps", "termination", "codes", "infra")


def script_safe_json(value: Any) -> str:
    """JSON that is ASCII and holds no ``<`` (so it can sit inside a ``<script>`` element)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def run_entry(meta: RunMeta, label: str, finished: int) -> dict[str, Any]:
    """A run as the page shows it: identity, harness (with its overlays) and what it was asked to do."""
    overlays = [str(o.get("id")) for o in meta.harness.get("overlays", []) or []]
    return {
        "run_id": meta.run_id,
        "label": label,
        "env": meta.env,
        "policy": meta.policy_id,
        "harness": f"{meta.harness.get('name')} ({meta.harness.get('id')})",
        "overlays": overlays,
        "split": meta.config.get("split"),
        "seed": meta.seed,
        "n": meta.n,
        "finished": finished,
        "created": meta.created,
    }


def step_detail(step: StepRecord) -> dict[str, Any]:
    """One step, every field a reader needs (empty ones left out to keep the page small)."""
    out = step.output
    detail: dict[str, Any] = {"i": step.index, "src": step.source}
    optional = {
        "ctx": step.context_digest,
        "raw": out.text if out is not None else None,
        "calls": [c.model_dump(mode="json") for c in out.tool_calls]
        if out is not None and out.tool_calls
        else None,
        "perr_model": out.error if out is not None else None,
        "replayed": True if out is not None and out.replayed else None,
        "attempts": out.attempts if out is not None and out.attempts > 1 else None,
        "parsed": step.parsed_action,
        "perr": step.parse_error,
        "action": step.action,
        "effects": step.effects or None,
        "dropped": step.dropped_effects or None,
        "herr": [e.model_dump(mode="json") for e in step.hook_errors] or None,
        "obs": step.observation,
        "flags": step.flags or None,
        "term": True if step.terminated else None,
        "trunc": True if step.truncated else None,
    }
    detail.update({k: v for k, v in optional.items() if v not in (None, "")})
    detail["rew"] = step.reward
    return detail


def episode_detail(episode: EpisodeRecord) -> dict[str, Any]:
    return {
        "instruction": episode.instruction,
        "initial": episode.initial_observation,
        "seed": episode.seed,
        "identity": episode.task_identity,
        "harness_id": episode.harness_id,
        "policy": episode.policy_id,
        "error": episode.error,
        "reward": episode.total_reward,
        "duration_s": round(episode.duration_s, 3),
        "steps": [step_detail(s) for s in episode.steps],
    }


@dataclass
class PageData:
    """Everything one page embeds; :meth:`add_run` appends a run and its episodes."""

    kind: str
    title: str
    source: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    offsets: list[int] = field(default_factory=lambda: [0])
    extra: dict[str, Any] = field(default_factory=dict)
    _details: list[str] = field(default_factory=list)
    _codes: dict[str, str] = field(default_factory=dict)

    def add_run(
        self, meta: RunMeta, episodes: Iterable[EpisodeRecord], label: str | None = None
    ) -> list[int]:
        """Add a run; return the page-wide indices of its episodes, in the order given."""
        run_index = len(self.runs)
        added: list[int] = []
        for episode in episodes:
            codes = detect(episode)
            for code in codes:
                self._codes.setdefault(code.value, code.description)
            self.rows.append(
                [
                    run_index,
                    episode.episode_index,
                    episode.task_id,
                    episode.task_type,
                    1 if episode.success else 0,
                    round(episode.score, 4),
                    episode.num_steps,
                    episode.termination,
                    [c.value for c in codes],
                    infrastructure_error(episode),
                ]
            )
            text = script_safe_json(episode_detail(episode))
            self._details.append(text)
            self.offsets.append(self.offsets[-1] + len(text))
            added.append(len(self.rows) - 1)
        self.runs.append(run_entry(meta, label or meta.run_id, len(added)))
        return added

    @property
    def details(self) -> str:
        return "".join(self._details)

    def payload(self) -> dict[str, Any]:
        """The page's main JSON (parsed on load)."""
        return {
            "kind": self.kind,
            "title": self.title,
            "source": self.source,
            "columns": list(ROW_COLUMNS),
            "runs": self.runs,
            "rows": self.rows,
            "offsets": self.offsets,
            "codes": dict(sorted(self._codes.items())),
            "all_codes": {c.value: c.description for c in FailureCode},
            **self.extra,
        }
