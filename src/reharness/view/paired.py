"""The paired page of an ``improve`` output: baseline and patched episodes of the same task, side by side.

``improve --out DIR`` writes ``result.json`` (rounds, the candidate table, the held-out comparison), the
engineer's proposals (``round-R/proposals.jsonl``, with each patch's hook code) and every run it made under
``runs/baselines/`` and ``runs/paired/``. A paired run is matched to its candidate by the patch it installs
last (``run.json``'s harness overlays) and its split; to its baseline by the same split, seed and task list
with one overlay fewer. A pair is the two episodes of one task identity; it *diverges* at the first step
where the executed action, the observation or the hook effects differ (prefix reuse makes the steps before
it identical by construction).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.core.errors import DataError
from reharness.store.records import EpisodeRecord, RunMeta
from reharness.view.model import PageData
from reharness.view.runs import read_run, run_dirs_under


def is_improve_dir(path: Path) -> bool:
    """``improve --out``: a ``result.json`` with a candidate table and rounds (an experiment's has none)."""
    try:
        result = json.loads((path / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(result, dict) and "candidates" in result and "rounds" in result


def divergence(base: EpisodeRecord, patched: EpisodeRecord) -> int | None:
    """The first step index at which the two episodes differ; None when they are the same throughout."""
    for i, (a, b) in enumerate(zip(base.steps, patched.steps, strict=False)):
        if (a.action, a.observation, a.effects) != (b.action, b.observation, b.effects):
            return i
    if len(base.steps) != len(patched.steps):
        return min(len(base.steps), len(patched.steps))
    return None


def outcome(base: EpisodeRecord, patched: EpisodeRecord) -> str:
    if base.success == patched.success:
        return "both_succeed" if base.success else "both_fail"
    return "rescued" if patched.success else "broken"


def _proposal_code(path: Path) -> dict[str, dict[str, Any]]:
    """patch id → {hooks: point → code, description} from every round's proposals and accepted patches."""
    patches: dict[str, dict[str, Any]] = {}
    for proposals in sorted(path.glob("round-*/proposals.jsonl")):
        for line in proposals.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            patch = entry.get("patch")
            if entry.get("patch_id") and isinstance(patch, dict):
                patches[str(entry["patch_id"])] = _code_of(patch)
    return patches


def _code_of(patch: dict[str, Any]) -> dict[str, Any]:
    hooks = {
        point: "\n\n".join(code) if isinstance(code, list) else str(code)
        for point, code in (patch.get("hooks") or {}).items()
    }
    return {"hooks": hooks, "description": patch.get("description", "")}


def _key(meta: RunMeta) -> tuple[Any, ...]:
    return (meta.config.get("split"), meta.seed, meta.n)


def add_comparisons(
    page: PageData, path: Path, candidates: list[dict[str, Any]], heldout_run: str = ""
) -> list[dict[str, Any]]:
    """Add every run under ``path/runs/baselines`` and ``path/runs/paired`` to ``page``; return one
    comparison per paired run with a baseline (labelled ``heldout``, its candidate's id, or its run id)."""
    baselines = [read_run(d) for d in run_dirs_under(path / "runs" / "baselines")]
    paired = [read_run(d) for d in run_dirs_under(path / "runs" / "paired")]
    base_rows: dict[str, list[int]] = {}
    labels = [r["label"] for r in page.runs]
    for meta, episodes in baselines:
        stem = f"baseline {meta.config.get('split')}"
        same = sum(1 for seen in labels if seen == stem or seen.startswith(stem + " "))
        label = f"{stem} {same + 1}" if same else stem  # later rounds' batches
        labels.append(label)
        base_rows[meta.run_id] = page.add_run(meta, episodes, label=label)
    comparisons: list[dict[str, Any]] = []
    for meta, episodes in paired:
        last = meta.harness.get("overlays", [])[-1]["id"] if meta.harness.get("overlays") else None
        run_label = "heldout" if meta.run_id == heldout_run else ""
        if not run_label:
            train_split = meta.config.get("split") != "test"
            ids = [str(c["id"]) for c in candidates if c.get("patch_id") == last and train_split]
            run_label = ids[0] if ids else meta.run_id
        rows = page.add_run(meta, episodes, label=run_label)
        base = _matching_baseline(meta, baselines)
        if base is None:
            continue
        base_meta, base_episodes = base
        by_identity = {
            e.task_identity: (i, e) for i, e in zip(base_rows[base_meta.run_id], base_episodes, strict=True)
        }
        pairs = []
        for row, episode in zip(rows, episodes, strict=True):
            found = by_identity.get(episode.task_identity)
            if found is None:
                continue
            base_row, base_episode = found
            pairs.append(
                {
                    "task": episode.task_id,
                    "base": base_row,
                    "patched": row,
                    "outcome": outcome(base_episode, episode),
                    "diverge": divergence(base_episode, episode),
                }
            )
        comparisons.append(
            {
                "label": run_label,
                "run": meta.run_id,
                "baseline_run": base_meta.run_id,
                "patch": last,
                "pairs": pairs,
            }
        )
    return comparisons


def paired_section(page: PageData, path: Path, result: dict[str, Any]) -> dict[str, Any]:
    """The ``improve`` part of a page's data: rounds, held-out result, candidates, comparisons, patch code."""
    heldout = result.get("heldout") or {}
    candidates = result.get("candidates", [])
    comparisons = add_comparisons(page, path, candidates, Path(str(heldout.get("run_dir") or "")).name)
    return {
        "config": result.get("config", {}),
        "rounds": result.get("rounds", []),
        "heldout": {k: v for k, v in heldout.items() if k not in ("cost",)} if heldout else None,
        "candidates": candidates,
        "accepted_patch": result.get("patch_path"),
        "comparisons": comparisons,
        "patches": _proposal_code(path),
    }


def load_improve(path: Path) -> PageData:
    """The page of an improve output: every run it made, the candidates, and the pairs of each comparison."""
    try:
        result = json.loads((path / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path / 'result.json'} cannot be read ({exc})") from exc
    page = PageData(kind="improve", title=f"improve · {path.name}", source=str(path))
    page.extra = {"improve": paired_section(page, path, result)}
    return page


def _matching_baseline(
    meta: RunMeta, baselines: list[tuple[RunMeta, list[EpisodeRecord]]]
) -> tuple[RunMeta, list[EpisodeRecord]] | None:
    overlays = [o.get("id") for o in meta.harness.get("overlays", [])][:-1]
    for base_meta, episodes in baselines:
        base_overlays = [o.get("id") for o in base_meta.harness.get("overlays", [])]
        if _key(base_meta) == _key(meta) and base_overlays == overlays:
            return base_meta, episodes
    return None
