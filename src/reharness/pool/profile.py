"""Behaviour profiles: what each sibling of a pool does, per failure cluster and per task type.

A :class:`Profile` (``reharness-profile-v1``, stored as ``POOL/profile.json``) is measured on *paired*
episodes: the same tasks and seeds run once under H0 and once under each sibling (:func:`measure_profile`).
A pair whose H0 episode failed is counted in every cluster its H0 failure codes fall in
(``directions.cluster_of``; none: :data:`OTHER`); a pair H0 solved is counted under :data:`SOLVED` (where
breaks live). Separately, every pair is counted under its task type, and H0's own rows by task type are kept,
so inference-time (Rank-1) routing can compare a sibling against H0 before acting.

A cell holds attempts, H0 failures, rescues (failed under H0, succeeded under the sibling), breaks
(succeeded under H0, failed under the sibling), the sibling's successes, a Wilson 95% interval of the rescue
rate, and the policy's behaviour under the sibling (invalid-action rate, repeat rate, mean steps, hook
effects per point).

Outcomes the router learns during training go to separate ``learned`` cells (:meth:`Profile.update`), so the
``validation`` strategy keeps reading what was measured at evolve time while ``profile`` reads both. A profile
records the pool's content hash, the policy (spec + hash) and the tasks it was measured on; re-anchoring to a
new policy is measuring again (:func:`reanchor`), which gives a new policy hash and drops learned outcomes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import ConfigError, DataError
from reharness.core.hashing import stable_hash
from reharness.pool.cell import ProfileCell, wilson
from reharness.pool.directions import Direction, builtin_directions, cluster_of
from reharness.pool.pool import PolicyRef, Pool
from reharness.store.records import EpisodeRecord

__all__ = [
    "OTHER",
    "PROFILE_FILE",
    "PROFILE_FORMAT",
    "SOLVED",
    "Profile",
    "ProfileCell",
    "load_profile",
    "measure_profile",
    "measured_temperature",
    "merge_profiles",
    "reanchor",
    "wilson",
]

PROFILE_FORMAT = "reharness-profile-v1"
PROFILE_FILE = "profile.json"
#: Cluster key of H0 failures whose codes fall in no direction's cluster.
OTHER = "other"
#: Cluster key of pairs H0 solved (the guard set: where a sibling can break a task).
SOLVED = "solved"
Cells = dict[str, dict[str, ProfileCell]]


class Profile(BaseModel):
    """The behaviour profile of a pool for one policy (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["reharness-profile-v1"] = "reharness-profile-v1"
    pool_hash: str = Field(description="content_hash of the pool's pool.json.")
    policy: PolicyRef
    policy_hash: str = Field(description="The policy's weights hash, or a hash of its spec where unknown.")
    split: str
    tasks: list[str] = Field(description="Task identities (seeded) the profile was measured on, sorted.")
    h0: dict[str, ProfileCell] = Field(default_factory=dict, description="H0's own rows, by task type.")
    cells: Cells = Field(default_factory=dict, description="Measured: sibling id → cluster key → cell.")
    by_task_type: Cells = Field(default_factory=dict, description="Measured: sibling id → task type → cell.")
    learned: Cells = Field(default_factory=dict, description="Learned in training: sibling → cluster → cell.")
    learned_by_task_type: Cells = Field(default_factory=dict)
    updates: int = Field(0, ge=0, description="Outcomes added by update().")
    temperature: float | None = Field(
        None,
        ge=0,
        description="Sampling temperature of the measured episodes (None: recorded before temperatures "
        "were; the pool's H0 sampling, greedy for the shipped pools).",
    )
    samples: int = Field(1, gt=0, description="Episodes per task and harness the profile was measured on.")

    def cell(self, sibling_id: str, cluster: str, *, learned: bool = True) -> ProfileCell:
        """The (measured, plus learned unless ``learned=False``) cell of a sibling for a cluster key."""
        return _get(self.cells, self.learned if learned else None, sibling_id, cluster)

    def type_cell(self, sibling_id: str, task_type: str, *, learned: bool = True) -> ProfileCell:
        """The (measured, plus learned unless ``learned=False``) cell of a sibling for a task type."""
        return _get(self.by_task_type, self.learned_by_task_type if learned else None, sibling_id, task_type)

    def update(
        self,
        sibling_id: str,
        cluster_keys: Sequence[str],
        task_type: str,
        rescued: bool,
        broke: bool,
        *,
        h0_failed: bool | None = None,
        record: EpisodeRecord | None = None,
    ) -> None:
        """Count one outcome learned during training in the ``learned`` cells.

        ``h0_failed`` defaults to ``not broke`` (the router's groups failed under H0); ``record`` (the
        sibling's episode) adds its behaviour. A rescue of a task H0 solved, or a break of one it failed,
        is a contradiction and refused.
        """
        failed = (not broke) if h0_failed is None else h0_failed
        if rescued and broke:
            raise ConfigError("an outcome cannot be both a rescue and a break")
        if rescued and not failed:
            raise ConfigError("a rescue needs a task that failed under H0 (h0_failed=True)")
        if broke and failed:
            raise ConfigError("a break needs a task that H0 solved (h0_failed=False)")
        success = rescued or (not failed and not broke)
        keys = list(cluster_keys) if failed else [SOLVED]
        for key in keys or [OTHER]:
            self.learned.setdefault(sibling_id, {}).setdefault(key, ProfileCell()).count(
                h0_failed=failed, success=success, record=record
            )
        self.learned_by_task_type.setdefault(sibling_id, {}).setdefault(task_type, ProfileCell()).count(
            h0_failed=failed, success=success, record=record
        )
        self.updates += 1

    def save(self, pool: Pool) -> Path:
        """Write the profile as ``POOL/profile.json`` (atomically); it must belong to ``pool``."""
        if pool.path is None:
            raise ConfigError("the pool has no directory yet", hint="save the pool before its profile")
        _check_pool(self, pool, pool.path / PROFILE_FILE)
        target = pool.path / PROFILE_FILE
        tmp = target.with_name(PROFILE_FILE + ".tmp")
        tmp.write_text(json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n", "utf-8")
        os.replace(tmp, target)
        return target

    @classmethod
    def load(cls, pool: Pool, path: str | Path | None = None) -> Profile:
        """Read ``POOL/profile.json`` (or ``path``) and check it belongs to ``pool``."""
        return load_profile(pool, path)


def merge_profiles(profiles: Sequence[Profile]) -> Profile:
    """One profile holding the counts of ``profiles`` (the same pool, policy and split measured on
    several samples per task): cells added, tasks united, ``samples`` summed."""
    if not profiles:
        raise DataError("no profiles to merge")
    first = profiles[0]
    for other in profiles[1:]:
        key = (other.pool_hash, other.policy_hash, other.split)
        if key != (first.pool_hash, first.policy_hash, first.split):
            raise DataError("only profiles of one pool, policy and split can be merged")

    def add(into: Cells, cells: Cells) -> None:
        for sid, by_key in cells.items():
            mine = into.setdefault(sid, {})
            for key, cell in by_key.items():
                mine[key] = mine[key].add(cell) if key in mine else cell.model_copy(deep=True)

    merged = first.model_copy(deep=True)
    for other in profiles[1:]:
        add(merged.cells, other.cells)
        add(merged.by_task_type, other.by_task_type)
        for task_type, cell in other.h0.items():
            merged.h0[task_type] = merged.h0[task_type].add(cell) if task_type in merged.h0 else cell
        merged.tasks = sorted(set(merged.tasks) | set(other.tasks))
        merged.samples += other.samples
    return merged


def measured_temperature(profile: Profile, pool: Pool) -> float:
    """The sampling temperature a profile's episodes ran at (older profiles: the pool's H0 sampling)."""
    return profile.temperature if profile.temperature is not None else pool.h0.sampling.temperature


def _get(measured: Cells, learned: Cells | None, sibling_id: str, key: str) -> ProfileCell:
    cell = measured.get(sibling_id, {}).get(key, ProfileCell())
    if learned is not None and key in learned.get(sibling_id, {}):
        cell = cell.add(learned[sibling_id][key])
    return cell


def pool_hash(pool: Pool) -> str:
    """The content hash of the pool's document (what a profile is bound to)."""
    return pool.document().content_hash


def policy_hash(policy: PolicyRef) -> str:
    """The policy's weights hash, or (scripted agents, unknown weights) a hash of its spec."""
    return policy.hash or stable_hash({"policy_spec": policy.spec})


def pool_directions(pool: Pool) -> tuple[Direction, ...]:
    """The directions whose clusters a pool's profile is keyed by (the pool's own, else the built-in ones)."""
    return tuple(pool.directions) or builtin_directions()


def cluster_keys(codes: Iterable[str], directions: Sequence[Direction]) -> tuple[str, ...]:
    """The cluster keys of a failure with ``codes``: its directions, or :data:`OTHER` for none."""
    return cluster_of(list(codes), directions) or (OTHER,)


def _index(records: Sequence[EpisodeRecord], what: str, env: str) -> dict[tuple[str, int], EpisodeRecord]:
    out: dict[tuple[str, int], EpisodeRecord] = {}
    for record in records:
        if record.env != env:
            raise DataError(
                f"{what}: episode {record.task_id} is from env {record.env!r}, the pool is {env!r}"
            )
        key = (record.task_identity, record.seed)
        if key in out:
            raise DataError(
                f"{what}: task {record.task_id} (identity {record.task_identity}, seed {record.seed}) "
                "appears twice",
                hint="pass one episode per task and seed",
            )
        out[key] = record
    return out


def measure_profile(
    pool: Pool,
    h0_records: Sequence[EpisodeRecord],
    sibling_records: Mapping[str, Sequence[EpisodeRecord]],
    *,
    policy: PolicyRef,
    split: str,
) -> Profile:
    """The profile of ``pool`` from paired episodes: ``h0_records`` under H0 and, for each sibling id,
    the same tasks and seeds under that sibling (a pure function of its inputs)."""
    directions = pool_directions(pool)
    clash = sorted({d.name for d in directions} & {OTHER, SOLVED})
    if clash:
        raise ConfigError(
            f"direction name(s) {clash} are reserved profile keys", hint="rename the directions"
        )
    if not h0_records:
        raise DataError("no H0 episodes to measure the profile on", hint="run H0 on the split first")
    h0 = _index(h0_records, "H0 episodes", pool.env)
    policies = {r.policy_id for r in h0_records} | {
        r.policy_id for records in sibling_records.values() for r in records
    }
    if len(policies) > 1:
        raise DataError(
            f"the episodes come from different policies {sorted(policies)}",
            hint="measure a profile on one policy's episodes",
        )
    known = {s.id for s in pool.siblings}
    profile = Profile(
        pool_hash=pool_hash(pool),
        policy=policy,
        policy_hash=policy_hash(policy),
        split=split,
        tasks=sorted({identity for identity, _ in h0}),
    )
    for record in h0.values():
        profile.h0.setdefault(record.task_type, ProfileCell()).count(
            h0_failed=not record.success, success=record.success, record=record
        )
    for sid, records in sibling_records.items():
        if sid not in known:
            raise DataError(f"episodes given for sibling {sid!r}, which is not in the pool")
        paired = _index(records, f"episodes of sibling {sid[:8]}", pool.env)
        if set(paired) != set(h0):
            missing, extra = len(set(h0) - set(paired)), len(set(paired) - set(h0))
            raise DataError(
                f"the episodes of sibling {sid[:8]} are not paired with H0's: {missing} H0 task(s) missing, "
                f"{extra} task(s) H0 did not run (task identity and seed must match)",
                hint="run every sibling on exactly H0's tasks and seeds",
            )
        for key, base in h0.items():
            mine = paired[key]
            failed = not base.success
            keys = cluster_keys(base.failure_codes, directions) if failed else (SOLVED,)
            for ckey in keys:
                profile.cells.setdefault(sid, {}).setdefault(ckey, ProfileCell()).count(
                    h0_failed=failed, success=mine.success, record=mine
                )
            profile.by_task_type.setdefault(sid, {}).setdefault(base.task_type, ProfileCell()).count(
                h0_failed=failed, success=mine.success, record=mine
            )
    return profile


def reanchor(
    pool: Pool,
    h0_records: Sequence[EpisodeRecord],
    sibling_records: Mapping[str, Sequence[EpisodeRecord]],
    *,
    policy: PolicyRef,
    split: str = "valid",
) -> Profile:
    """Re-anchor the pool's profile to ``policy``: a fresh measurement on its episodes (new policy hash,
    learned outcomes dropped — they were learned about the old policy)."""
    return measure_profile(pool, h0_records, sibling_records, policy=policy, split=split)


def _check_pool(profile: Profile, pool: Pool, file: Path) -> None:
    expected = pool_hash(pool)
    if profile.pool_hash != expected:
        raise DataError(
            f"{file}: field 'pool_hash' is {profile.pool_hash!r} but the pool's content hash is "
            f"{expected!r}; the profile belongs to another pool",
            hint="re-measure the profile for this pool (`reharness pool reanchor POOL`)",
        )


def load_profile(pool: Pool, path: str | Path | None = None) -> Profile:
    """Read and check a pool's profile (default ``POOL/profile.json``); errors name the file and field."""
    if path is None:
        if pool.path is None:
            raise ConfigError("the pool has no directory", hint="load the pool with load_pool(DIR)")
        path = pool.path / PROFILE_FILE
    file = Path(path)
    if not file.is_file():
        raise DataError(
            f"{file} does not exist: the pool has no profile yet", hint="run `pool reanchor POOL`"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"{file} is not a text file", hint="re-measure the profile") from None
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{file} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            hint="the profile is corrupt or partly written; re-measure it (`reharness pool reanchor POOL`)",
        ) from None
    if not isinstance(data, dict):
        raise DataError(f"{file} must hold a JSON object, got {type(data).__name__}")
    if data.get("format") != PROFILE_FORMAT:
        raise DataError(f"{file}: field 'format' is {data.get('format')!r}, not {PROFILE_FORMAT!r}")
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()[:6]
        )
        raise DataError(f"{file} is invalid: {problems}", hint="re-measure the profile") from None
    _check_pool(profile, pool, file)
    return profile
