"""Trajectory store: typed records, append-only JSONL per run, SQLite index, Parquet export.

- :mod:`.records`: the versioned, typed trajectory records (:class:`EpisodeRecord`, :class:`StepRecord`, ...);
- :mod:`.run_store`: append-only run directories and their SQLite index (:class:`RunStore`);
- :mod:`.writer`: durable episode writes with group commit, on one connection, off the event loop;
- :mod:`.parquet`: export of a run's trajectories to Parquet (episodes and steps) with pyarrow.
"""

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
