"""What ``reharness view`` embeds, checked without a browser: kinds, counts, pairs, lazy details, safety."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner
from view_outputs import POOL, ROOT, TRAINING, improve_dir_fixture, runs_fixture  # noqa: F401 - the fixtures improve_dir, runs

from reharness.cli.main import app
from reharness.cli.view_cmd import serve
from reharness.core.errors import DataError
from reharness.store.records import EpisodeRecord, RunMeta, StepRecord
from reharness.view import build_page, page_kind, render_html
from reharness.view.model import PageData
from reharness.view.paired import divergence
from reharness.view.runs import read_run


def embedded(html: str) -> tuple[dict, str]:
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    details = re.search(r'<script type="text/plain" id="episode-details">(.*?)</script>', html, re.S)
    assert data and details
    return json.loads(data.group(1)), details.group(1)


def test_a_run_page_holds_every_episode_and_its_steps(runs: dict[str, Path]) -> None:
    page = build_page(runs["random"])
    data, details = embedded(render_html(page))
    _, episodes = read_run(runs["random"])
    assert data["kind"] == "run" and len(data["rows"]) == len(episodes) == 3
    assert [r[data["columns"].index("success")] for r in data["rows"]] == [0, 0, 0]
    assert all("step_limit" in r[data["columns"].index("codes")] for r in data["rows"])
    for i, episode in enumerate(episodes):  # each slice of the details text is that episode's steps
        one = json.loads(details[data["offsets"][i] : data["offsets"][i + 1]])
        assert [s["action"] for s in one["steps"]] == [s.action for s in episode.steps]
        assert one["instruction"] == episode.instruction


def test_a_folder_of_runs_is_one_page_with_a_harness_per_run(runs: dict[str, Path]) -> None:
    data, _ = embedded(render_html(build_page(runs["out"])))
    assert data["kind"] == "run" and len(data["runs"]) == 2 and len(data["rows"]) == 6
    assert {r["policy"] for r in data["runs"]} == {"solver", "random"}


def test_the_improve_page_pairs_baseline_and_patched_episodes(improve_dir: Path) -> None:
    result = json.loads((improve_dir / "result.json").read_text())
    data, _ = embedded(render_html(build_page(improve_dir)))
    imp = data["improve"]
    assert data["kind"] == "improve" and [c["id"] for c in imp["candidates"]] == ["r1-c0", "r1-c1"]
    by_label = {c["label"]: c for c in imp["comparisons"]}
    assert set(by_label) == {"heldout", "r1-c0", "r1-c1"}
    heldout = by_label["heldout"]
    assert len(heldout["pairs"]) == result["heldout"]["n"] == 6
    rescued = sorted(p["task"] for p in heldout["pairs"] if p["outcome"] == "rescued")
    assert rescued == sorted(result["heldout"]["rescued"]) and rescued
    assert all(p["diverge"] is not None for p in heldout["pairs"] if p["outcome"] == "rescued")
    assert heldout["patch"] in imp["patches"] and "def hook" in "".join(
        imp["patches"][heldout["patch"]]["hooks"].values()
    )
    for cand in result["candidates"]:
        pairs = by_label[cand["id"]]["pairs"]
        assert sorted(p["task"] for p in pairs if p["outcome"] == "rescued") == sorted(cand["rescued_ids"])


def _episode(actions: list[str], observations: list[str]) -> EpisodeRecord:
    pairs = enumerate(zip(actions, observations, strict=True))
    steps = [StepRecord(index=i, action=a, observation=o) for i, (a, o) in pairs]
    return EpisodeRecord(
        run_id="r", episode_index=0, seed=0, env="household", task_id="t", task_identity="x", task_type="p",
        instruction="do", initial_observation="start", harness_id="h", policy_id="p", steps=steps,
        num_steps=len(steps),
    )  # fmt: skip


def test_divergence_is_the_first_step_that_differs() -> None:
    base = _episode(["a", "b", "c"], ["1", "2", "3"])
    assert divergence(base, _episode(["a", "b", "c"], ["1", "2", "3"])) is None
    assert divergence(base, _episode(["a", "x", "c"], ["1", "2", "3"])) == 1
    assert divergence(base, _episode(["a", "b", "c"], ["1", "2", "9"])) == 2
    assert divergence(base, _episode(["a", "b"], ["1", "2"])) == 2


def test_trajectory_text_cannot_close_the_script_element(tmp_path: Path) -> None:
    meta = RunMeta(
        run_id="r", config_hash="c", created="now", package_version="0", env="household", policy_id="p",
        harness={"name": "h", "id": "1"}, seed=0, n=1, config={},
    )  # fmt: skip
    nasty = "</script><script>alert(1)</script> ✓ 🙂"
    page = PageData(kind="run", title="t", source="s")
    page.add_run(meta, [_episode([nasty], [nasty])])
    html = render_html(page)
    assert html.count("</script>") == 3  # the three script elements, nothing from the trajectory
    data, details = embedded(html)
    one = json.loads(details[data["offsets"][0] : data["offsets"][1]])
    assert one["steps"][0]["obs"] == nasty and details.isascii()


def test_reading_a_run_being_written_leaves_it_untouched(runs: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "run.json").write_bytes((runs["solver"] / "run.json").read_bytes())
    lines = (runs["solver"] / "episodes.jsonl").read_bytes()
    partial = lines + b'{"schema_version": "reharness-traj'
    (copy / "episodes.jsonl").write_bytes(partial)
    _, episodes = read_run(copy)
    assert len(episodes) == 3 and (copy / "episodes.jsonl").read_bytes() == partial


def test_kinds_and_a_clear_error_for_anything_else(
    runs: dict[str, Path], improve_dir: Path, tmp_path: Path
) -> None:
    assert page_kind(runs["solver"]) == "run" and page_kind(runs["out"]) == "run"
    assert (
        page_kind(improve_dir) == "improve"
        and page_kind(POOL) == "pool"
        and page_kind(TRAINING) == "training"
    )
    with pytest.raises(DataError, match="nothing reharness view can show"):
        page_kind(tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        page_kind(tmp_path / "missing")


def test_pool_and_training_pages_hold_their_tables_and_curves() -> None:
    pool, _ = embedded(render_html(build_page(POOL)))
    titles = [s["table"]["title"] for s in pool["sections"] if "table" in s]
    assert titles[:3] == ["siblings", "directions", "behaviour profile"]
    siblings = json.loads((POOL / "pool.json").read_text())["siblings"]
    assert len(pool["sections"][0]["table"]["rows"]) == len(siblings)
    training, _ = embedded(render_html(build_page(TRAINING)))
    charts = [s["chart"] for s in training["sections"] if "chart" in s]
    assert charts[0]["title"] == "reward per step"
    assert {s["name"] for s in charts[0]["series"]} == {"none", "resample", "router"}
    steps = len((TRAINING / "router" / "metrics.jsonl").read_text().splitlines())
    assert all(len(s["points"]) == steps for s in charts[0]["series"])


def test_router_decisions_join_their_outcomes() -> None:
    source = ROOT / "docs" / "results" / "policy-s" / "shop-s0"
    lines = [json.loads(x) for x in (source / "router" / "decisions.jsonl").read_text().splitlines()]
    page, _ = embedded(render_html(build_page(source)))
    (table,) = [s["table"] for s in page["sections"] if s.get("table", {}).get("title") == "router decisions"]
    decisions = [d for d in lines if d["type"] == "decision"]
    assert [r[0] for r in table["rows"]] == [d["task_id"] for d in decisions]
    solved = {o["decision_id"]: o["outcome"] for o in lines if o["type"] == "outcome"}
    for row, d in zip(table["rows"], decisions, strict=True):
        outcome = solved[d["decision_id"]]
        assert row[-1].endswith(f"{outcome['successes']}/{outcome['attempts']}")


def test_cli_writes_the_page_and_rejects_a_bad_path(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["view", str(runs["solver"]), "--out", str(out)])
    assert result.exit_code == 0 and result.stdout.strip() == str(out)
    assert "<!DOCTYPE html>" in out.read_text() and "default-src 'none'" in out.read_text()
    result = CliRunner().invoke(app, ["view", str(runs["solver"])])
    assert result.exit_code == 0 and (runs["solver"] / "view.html").is_file()
    (runs["solver"] / "view.html").unlink()
    bad = CliRunner().invoke(app, ["view", str(tmp_path / "nope")])
    assert bad.exit_code == 2 and "does not exist" in bad.stderr and "how to fix" in bad.stderr


def test_serve_answers_the_page_on_localhost(runs: dict[str, Path]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    servers: list = []
    ready = threading.Event()
    thread = threading.Thread(
        target=serve, args=(runs["solver"], port, lambda s: (servers.append(s), ready.set()))
    )
    thread.start()
    assert ready.wait(10)
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode()
    assert 'id="page-data"' in body and "household-solver" in body
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
    servers[0].shutdown()
    thread.join(10)
    assert not thread.is_alive()


def test_an_experiment_output_gets_its_tables_and_its_paired_reruns(
    improve_dir: Path, tmp_path: Path
) -> None:
    exp = tmp_path / "exp"  # the layout of `experiment r1 --out`: r1_config.json, result.json, runs/
    exp.mkdir()
    (exp / "runs").symlink_to(improve_dir / "runs")
    (exp / "r1_config.json").write_text("{}")
    (exp / "result.json").write_text(json.dumps({"rows": []}))
    (exp / "eval.jsonl").write_text(
        json.dumps({"env": "household", "method": "none", "successes": [0.0, 1.0]})
        + "\n"
        + json.dumps({"env": "household", "method": "operators", "successes": [1.0, 1.0]})
        + "\n"
    )
    assert page_kind(exp) == "training"
    data, _ = embedded(render_html(build_page(exp)))
    (table,) = [
        s["table"]
        for s in data["sections"]
        if s.get("table", {}).get("title") == "held-out success by method"
    ]
    assert table["rows"] == [["none", 0.5], ["operators", 1.0]]
    paired_runs = len(list((improve_dir / "runs" / "paired").iterdir())) - 1  # index.sqlite
    assert len(data["improve"]["comparisons"]) == paired_runs
    assert len(data["runs"]) == paired_runs + len(list((improve_dir / "runs" / "baselines").iterdir()))
