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
from reharness.view.paired import paired_section
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


#: files that mark a training or experiment output (``train policy``, ``train engineer``, ``experiment r1|s``)
TRAINING_LOGS = ("metrics.jsonl", "rewards.jsonl", "grpo-rewards.jsonl")
TRAINING_CONFIGS = ("train_config.json", "r1_config.json", "s_config.json")


def is_training_dir(path: Path) -> bool:
    return any(_find(path, name) for name in TRAINING_LOGS) or any(
        (path / n).is_file() for n in TRAINING_CONFIGS
    )


def _table(title: str, columns: list[str], rows: list[list[Any]], **more: Any) -> dict[str, Any]:
    return {"table": {"title": title, "columns": columns, "rows": rows, **more}}


def _embed_runs(page: PageData, path: Path) -> None:
    """Every run below ``path`` (at most :data:`MAX_RUNS`) not already on the page."""
    shown = {r["run_id"] for r in page.runs}
    for run_path in [p for p in run_dirs_under(path, depth=5) if p.name not in shown][:MAX_RUNS]:
        meta, episodes = read_run(run_path)
        page.add_run(meta, episodes, label=str(run_path.relative_to(path)))


def _outcome_text(outcome: dict[str, Any], names: dict[Any, Any]) -> str:
    sibling = outcome.get("sibling_id")
    return f"{names.get(sibling, sibling)} {outcome.get('successes')}/{outcome.get('attempts')}"


def _decision_rows(lines: list[dict[str, Any]]) -> list[list[Any]]:
    """One row per router decision, its outcome lines (``type: outcome``) joined by decision id."""
    outcomes: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line.get("type") == "outcome":
            found = line.get("outcome")
            listed = found if isinstance(found, list) else [found] if isinstance(found, dict) else []
            outcomes.setdefault(str(line.get("decision_id")), []).extend(listed)
    rows = []
    for d in lines:
        if d.get("type", "decision") != "decision":
            continue
        candidates = d.get("candidates") or []
        names = {c.get("sibling_id"): c.get("name") for c in candidates if isinstance(c, dict)}
        chosen = [str(names.get(c, c)) for c in d.get("choice") or []]
        reasons = [c.get("reason") for c in candidates if c.get("sibling_id") in (d.get("choice") or [])]
        done = [o for o in [*(d.get("outcome") or []), *outcomes.get(str(d.get("decision_id")), [])] if o]
        rows.append(
            [
                d.get("task_id", ""),
                d.get("strategy", ""),
                ", ".join(
                    f"{c.get('name')} {c.get('score', 0):.3f}" for c in candidates if isinstance(c, dict)
                ),
                ", ".join(chosen) or "H0",
                "; ".join(str(r) for r in reasons if r)[:200],
                json.dumps(d.get("votes") or [])[:200],
                ", ".join(f"{k} {v}" for k, v in sorted((d.get("failure_codes") or {}).items())),
                ", ".join(_outcome_text(o, names) for o in done),
            ]
        )
    return rows


def _decision_table(path: Path) -> list[dict[str, Any]]:
    """The router's decision logs below ``path``: candidates with scores, choice, reason, votes, outcome."""
    sections = []
    columns = [
        "task",
        "strategy",
        "candidates (score)",
        "chosen",
        "reason",
        "votes",
        "failure codes",
        "outcome",
    ]
    for log in _find(path, "decisions.jsonl"):
        rows = _decision_rows(_jsonl(log))[:5000]
        note = f"{log.relative_to(path)} ({len(rows)} decisions; outcome: rollouts solved / tried)"
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
    ("reward per step", ("train_reward", "reward", "delta")),  # engineer logs: mean Δ_B of a step
    ("success in H0 per step", ("h0_success", "success")),
    ("rescues succeeded per step", ("rescues_succeeded",)),
    ("rescues tried per step", ("rescues_tried",)),
)


def _curve(log: list[dict[str, Any]], keys: tuple[str, ...]) -> list[list[float]]:
    """(step, mean value) per step: the first of ``keys`` a line holds; several lines of a step averaged."""
    by_step: dict[float, list[float]] = {}
    for i, line in enumerate(log):
        value = next((line[k] for k in keys if isinstance(line.get(k), int | float)), None)
        if value is not None:
            by_step.setdefault(float(line.get("step", i + 1)), []).append(float(value))
    return [[step, sum(v) / len(v)] for step, v in sorted(by_step.items())]


def _eval_table(records: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """Held-out success per env × method from an experiment's ``eval.jsonl`` (one line per batch)."""
    cells: dict[tuple[str, str], list[float]] = {}
    for r in records:
        if isinstance(r.get("successes"), list) and r.get("method"):
            cells.setdefault((str(r.get("env")), str(r["method"])), []).extend(
                float(x) for x in r["successes"]
            )
    if not cells:
        return []
    envs = sorted({e for e, _ in cells})
    methods = list(dict.fromkeys(m for _, m in cells))
    rows = [
        [m, *[round(sum(v) / len(v), 4) if (v := cells.get((e, m))) else None for e in envs]] for m in methods
    ]
    return [_table("held-out success by method", ["method", *envs], rows, heat=True, note=source)]


def load_training(path: Path) -> PageData:
    page = PageData(kind="training", title=f"training · {path.resolve().name}", source=str(path))
    logs = {
        f"{p.parent.relative_to(path)}" + ("" if name == "metrics.jsonl" else f" ({name})"): _jsonl(p)
        for name in TRAINING_LOGS
        for p in _find(path, name)
    }
    sections: list[dict[str, Any]] = []
    for title, keys in CURVES:
        series = [
            {"name": name, "points": points} for name, log in logs.items() if (points := _curve(log, keys))
        ]
        if series:
            sections.append({"chart": {"title": title, "series": series}})
    evals = [(p, _jsonl(p)) for p in _find(path, "eval.jsonl", depth=1)]
    for p, records in evals:
        sections += _eval_table(records, str(p.relative_to(path)))
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
    if (path / "runs" / "paired").is_dir():  # experiment r1: each method's patch rerun against its baseline
        page.extra["improve"] = paired_section(page, path, {})
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
