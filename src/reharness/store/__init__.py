"""Trajectory store: typed records, append-only JSONL per run, SQLite index, Parquet export."""

from reharness.store.records import SCHEMA_VERSION, EpisodeRecord, RunMeta, StepRecord, trajectory_digest
from reharness.store.run_store import RunStore, open_run_dir

__all__ = [
    "SCHEMA_VERSION",
    "EpisodeRecord",
    "RunMeta",
    "RunStore",
    "StepRecord",
    "open_run_dir",
    "trajectory_digest",
]
