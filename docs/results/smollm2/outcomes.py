"""Per-task outcomes of one SmolLM2 target run, written next to the published table (issue 36).

Usage: python docs/results/smollm2/outcomes.py RUN_DIR OUT_DIR
  RUN_DIR  a `reharness run` directory (holds episodes.jsonl and run.json)
  OUT_DIR  where base-run.json (the run's summary) and base-outcomes.jsonl (one line per episode) go

The trajectories themselves stay out of the repository (tens of MB); the outcome lines keep what a paired CI
and the failure-code mix need, plus what the model did (distinct actions, its first action).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from reharness.store.records import EpisodeRecord
from reharness.store.run_store import open_run_dir


def outcome(episode: EpisodeRecord) -> dict:
    played = [step.action for step in episode.steps if step.action]
    return {
        "episode_index": episode.episode_index,
        "task_identity": episode.task_identity,
        "seed": episode.seed,
        "success": episode.success,
        "score": episode.score,
        "num_steps": episode.num_steps,
        "failure_codes": episode.failure_codes,
        "duration_s": episode.duration_s,
        "distinct_actions": len(set(played)),
        "first_action": played[0][:120] if played else None,
    }


def main(run_dir: Path, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    episodes = sorted(open_run_dir(run_dir).episodes(), key=lambda e: e.episode_index)
    with (out_dir / "base-outcomes.jsonl").open("w") as f:
        for episode in episodes:
            f.write(json.dumps(outcome(episode)) + "\n")
    shutil.copy(run_dir / "run.json", out_dir / "base-run-manifest.json")
    print(f"{len(episodes)} episodes -> {out_dir}/base-outcomes.jsonl")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
