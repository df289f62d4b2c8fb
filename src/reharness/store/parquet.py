"""Export a run's trajectories to Parquet (one table of episodes, one of steps) with pyarrow."""

from __future__ import annotations

import json
from pathlib import Path

from reharness.store.run_store import open_run_dir


def export_parquet(run_dir: str | Path, dest: str | Path | None = None) -> tuple[Path, Path]:
    """Write ``episodes.parquet`` and ``steps.parquet`` for a run; return their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = open_run_dir(run_dir)
    dest_dir = Path(dest) if dest else store.run_dir
    dest_dir.mkdir(parents=True, exist_ok=True)
    episode_rows = []
    step_rows = []
    for ep in store.episodes():
        row = ep.model_dump(exclude={"steps"})
        row["failure_codes"] = list(ep.failure_codes)
        episode_rows.append(row)
        for st in ep.steps:
            step_rows.append(
                {
                    "run_id": ep.run_id,
                    "episode_index": ep.episode_index,
                    "step": st.index,
                    "source": st.source,
                    "context_digest": st.context_digest,
                    "output_text": st.output.text if st.output else None,
                    "output_tool_calls": json.dumps([c.model_dump() for c in st.output.tool_calls])
                    if st.output
                    else None,
                    "parsed_action": st.parsed_action,
                    "parse_error": st.parse_error,
                    "action": st.action,
                    "effects": json.dumps(st.effects),
                    "hook_errors": json.dumps([h.model_dump() for h in st.hook_errors]),
                    "observation": st.observation,
                    "reward": st.reward,
                    "terminated": st.terminated,
                    "truncated": st.truncated,
                    "flags": list(st.flags),
                }
            )
    episodes_path = dest_dir / "episodes.parquet"
    steps_path = dest_dir / "steps.parquet"
    pq.write_table(pa.Table.from_pylist(episode_rows), episodes_path)
    pq.write_table(pa.Table.from_pylist(step_rows), steps_path)
    return episodes_path, steps_path
