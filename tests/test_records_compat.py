"""Trajectory records written before the retry trace and reuse markers existed still load, with defaults."""

from __future__ import annotations

import json

from reharness.measure.baseline import stored_cost
from reharness.store.records import EpisodeRecord

OLD = {  # an episode line as reharness-trajectory-v1 wrote it before `attempts`, `replayed`, ...
    "schema_version": "reharness-trajectory-v1", "run_id": "r", "episode_index": 0, "seed": 1, "env": "db",
    "task_id": "t", "task_identity": "i", "task_type": "select", "instruction": "q",
    "initial_observation": "o", "harness_id": "h", "policy_id": "p", "termination": "error",
    "error": "policy error: HTTP 500",
    "steps": [
        {"index": 0, "output": {"text": "Action: x", "tool_calls": [], "error": None,
                                "completion_token_ids": [1, 2], "logprobs": None}},
        {"index": 1, "output": {"text": "", "tool_calls": [], "error": "HTTP 500"},
         "flags": ["policy_error"]},
    ],
}  # fmt: skip


def test_old_episode_lines_load_with_defaults() -> None:
    record = EpisodeRecord.model_validate_json(json.dumps(OLD))
    first = record.steps[0].output
    assert first is not None and first.attempts == 1 and first.retry_waits_s == [] and not first.replayed
    assert first.prompt_tokens is None
    cost = stored_cost([record])
    assert (cost.episodes, cost.model_calls, cost.reused_calls, cost.completion_tokens) == (1, 2, 0, 2)
    assert cost.prompt_tokens is None
