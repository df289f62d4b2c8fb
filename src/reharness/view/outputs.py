"""Pool and training pages: tables and curves read from what ``pool evolve``, ``train …`` and ``experiment …``
wrote, plus every run found beneath them (the episodes behind the numbers, in the page's episodes tab).

- **Pool** (``pool.json``): the siblings (direction, what each changes, its evidence), the directions, the
  behaviour profile as a heat map (sibling × failure cluster rescue rate), and the router's decision log
  (``decisions.jsonl`` wherever one is found below the pool) with votes and outcomes.
- **Training** (one or more ``metrics.jsonl`` / ``rewards.jsonl`` below the path): reward, success and
  rescue curves per step and per method, each method's ``summary.json``, the report's markdown tables and
  the router's decisions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.view.model import PageData
from reharness.view.runs import read_run, run_dirs_under

MAX_RUNS = 200  # runs embedded below a pool or training output (the rest are listed, not embedded)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                break  # a line still being written
    return rows


def _find(path: Path, name: str, depth: int = 3) -> list[Path]:
    return sorted(p for p in path.rglob(name) if len(p.relative_to(path).parts) <= depth + 1)


def is_pool_dir(path: Path) -> bool:
    return (path / "pool.json").is_file()


def is_training_dir(path: Path) -> bool:
    return bool(_find(path, "metrics.jsonl") or _find(path, "rewards.jsonl"))


def _table(title: str, columns: list[str], rows: list[list[Any]], **more: Any) -> dict[str, Any]:
    return {"table": {"title": title, "columns": columns, "rows": rows, **more}}


def _embed_runs(page: PageData, path: Path) -> None:
    for run_path in run_dirs_under(path, depth=5)[:MAX_RUNS]:
        meta, episodes = read_run(run_path)
        page.add_run(meta, episodes, label=str(run_path.relative_to(path)))


def _decision_table(path: Path) -> list[dict[str, Any]]:
    sections = []
    for log in _find(path, "decisions.jsonl"):
        rows = []
        for d in _jsonl(log)[:2000]:
            ranked = d.get("ranked") or d.get("candidates") or []
            chosen = (
                d.get("chosen")
                or d.get("siblings")
                or [r.get("name") for r in ranked[:1] if isinstance(r, dict)]
            )
            rows.append(
                [
                    d.get("step", d.get("id", "")),
                    str(d.get("task_index", d.get("task", ""))),
                    ", ".join(map(str, chosen)) if isinstance(chosen, list) else str(chosen),
                    str(d.get("reason", ""))[:200],
                    json.dumps(d.get("votes", ""))[:200],
                    str(d.get("outcome", d.get("rescued", ""))),
                ]
            )
        note = f"{log.relative_to(path)} ({len(rows)} decisions)"
        columns = ["step", "task", "chosen", "reason", "votes", "outcome"]
        sections.append(_table("router decisions", columns, rows, note=note))
    return sections


def load_pool(path: Path) -> PageData:
    pool = json.loads((path / "pool.json").read_text(encoding="utf-8"))
    page = PageData(kind="pool", title=f"pool · {path.name} ({pool.get('env')})", source=str(path))
    sections: list[dict[str, Any]] = []
    siblings = pool.get("siblings", [])
    sections.append(
        _table(
            "siblings",
            ["name", "id", "direction", "what it changes", "patches", "config delta", "evidence"],
            [
                [
                    s.get("name"),
                    s.get("id"),
                    s.get("direction"),
                    s.get("description"),
                    ", ".join(p.get("id", "") for p in s.get("patches", [])),
                    json.dumps(s.get("delta", {})),
                    json.dumps(s.get("evidence", {})),
                ]
                for s in siblings
            ],
        )
    )
    sections.append(
        _table(
            "directions",
            ["name", "description", "failure codes", "operators", "config fields"],
            [
                [
                    d.get("name"),
                    d.get("description"),
                    ", ".join(d.get("codes", [])),
                    ", ".join(d.get("operators", [])),
                    ", ".join(d.get("config_fields", [])),
                ]
                for d in pool.get("directions", [])
            ],
        )
    )
    profile_path = path / "profile.json"
    if profile_path.is_file():
        profile = json.loads(profile_path.read_text(encoding="utf-8"))
        cells = profile.get("cells", {})
        names = {s.get("id"): s.get("name") for s in siblings}
        clusters = sorted({c for per in cells.values() for c in per})
        rows = [
            [names.get(sid, sid), *[per.get(c, {}).get("rescue_rate") for c in clusters]]
            for sid, per in sorted(cells.items(), key=lambda kv: str(names.get(kv[0], kv[0])))
        ]
        note = f"rescue rate per sibling × failure cluster, measured on policy {profile.get('policy')}"
        sections.append(_table("behaviour profile", ["sibling", *clusters], rows, heat=True, note=note))
    sections += _decision_table(path)
    page.extra = {"sections": sections}
    _embed_runs(page, path)
    return page


CURVES = (
    ("reward per step", ("train_reward", "reward", "mean_reward")),
    ("success in H0 per step", ("h0_success", "success")),
    ("rescues succeeded per step", ("rescues_succeeded",)),
    ("rescues tried per step", ("rescues_tried",)),
)


def load_training(path: Path) -> PageData:
    page = PageData(kind="training", title=f"training · {path.resolve().name}", source=str(path))
    logs = {str(p.parent.relative_to(path)) or ".": _jsonl(p) for p in _find(path, "metrics.jsonl")}
    logs.update({f"{p.parent.relative_to(path)} (engineer)": _jsonl(p) for p in _find(path, "rewards.jsonl")})
    sections: list[dict[str, Any]] = []
    for title, keys in CURVES:
        series = []
        for name, log in logs.items():
            points = [
                [r.get("step", i + 1), next(r[k] for k in keys if isinstance(r.get(k), int | float))]
                for i, r in enumerate(log)
                if any(isinstance(r.get(k), int | float) for k in keys)
            ]
            if points:
                series.append({"name": name, "points": points})
        if series:
            sections.append({"chart": {"title": title, "series": series}})
    summaries = _find(path, "summary.json")
    if summaries:
        rows: list[list[Any]] = []
        for p in summaries:
            s = json.loads(p.read_text(encoding="utf-8"))
            rescues = s.get("rescues", {}) if isinstance(s.get("rescues"), dict) else {}
            rows.append(
                [
                    str(p.parent.relative_to(path)),
                    s.get("steps"),
                    s.get("rollouts"),
                    rescues.get("tried"),
                    rescues.get("succeeded"),
                    s.get("train_seconds"),
                ]
            )
        sections.append(
            _table("methods", ["method", "steps", "rollouts", "rescues tried", "rescued", "seconds"], rows)
        )
    for report in _find(path, "report.md", depth=1):
        sections += markdown_tables(report.read_text(encoding="utf-8"), str(report.relative_to(path)))
    sections += _decision_table(path)
    page.extra = {"sections": sections}
    _embed_runs(page, path)
    return page


def markdown_tables(text: str, source: str) -> list[dict[str, Any]]:
    """The pipe tables of a markdown report, each titled by the heading above it."""
    found: list[dict[str, Any]] = []
    heading, block = source, []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.strip().startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 2:
            body = [r for r in block[1:] if not all(set(c) <= set("-: ") for c in r)]
            found.append(_table(heading, block[0], body, note=source))
        block = []
    return found
