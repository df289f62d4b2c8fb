"""Each kind of page opened in headless Chromium, checked in its live DOM through the DevTools protocol.

Pages come from real small outputs (:mod:`conftest`). Every load also checks that the page raised nothing,
logged no console error and requested nothing but itself (no network at view time). Filters are driven both
by a URL hash on load and by a scripted change of a filter control.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_outputs import POOL, TRAINING, improve_dir_fixture, runs_fixture  # noqa: F401 - the fixtures improve_dir, runs

from reharness.view import PageData, build_page, render_html
from reharness.view.browser import Browser, find_chromium
from reharness.view.runs import read_run

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium: install Debian's chromium (.ci/run does) to run the browser tests",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def page_file(source: Path, tmp_path: Path) -> Path:
    out = tmp_path / "page.html"
    out.write_text(render_html(build_page(source)), encoding="utf-8")
    return out


def load(browser: Browser, page: Path, hash_: str = "") -> None:
    url = page.resolve().as_uri()
    browser.open(url + hash_)
    assert browser.evaluate("document.body.dataset.ready") == "1"
    assert browser.exceptions == [] and browser.console_errors == []
    assert browser.evaluate("document.getElementById('errors').hidden") is True
    assert browser.requests == [url]  # the page itself (a request carries no hash), nothing else


def count(browser: Browser, selector: str) -> int:
    return int(browser.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))


def texts(browser: Browser, selector: str) -> list[Any]:
    return list(
        browser.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)")
    )


def test_run_page_summary_chart_grid_and_hash_filters(
    browser: Browser, runs: dict[str, Path], tmp_path: Path
) -> None:
    page = page_file(runs["out"], tmp_path)
    load(browser, page)
    assert (
        count(browser, ".cell") == 6 and count(browser, ".cell.ok") == 3 and count(browser, ".cell.fail") == 3
    )
    assert texts(browser, "#n-episodes") == ["6"] and texts(browser, "#success-rate") == ["50.0%"]
    assert count(browser, "tr.episode-row") == 6
    bars = browser.evaluate(
        "[...document.querySelectorAll('.bar-row')]"
        ".map(e => [e.dataset.code, e.querySelector('.count').textContent])"
    )
    assert ["step_limit", "3"] in bars
    load(browser, page, "#code=step_limit")
    assert count(browser, ".cell") == 3 and count(browser, ".cell.fail") == 3
    assert texts(browser, "#count") == ["3 of 6 episodes"]
    load(browser, page, "#outcome=ok")
    assert count(browser, ".cell") == count(browser, ".cell.ok") == 3
    random_label = read_run(runs["random"])[0].run_id
    load(browser, page, f"#harness={random_label}&type=does-not-exist")
    assert count(browser, ".cell") == 0


def test_a_filter_control_and_a_chart_bar_filter_the_grid(
    browser: Browser, runs: dict[str, Path], tmp_path: Path
) -> None:
    page = page_file(runs["out"], tmp_path)
    load(browser, page)
    browser.evaluate(
        "(() => { const s = document.getElementById('f-outcome'); s.value = 'fail';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    browser.evaluate("new Promise(r => setTimeout(r, 50))")  # let hashchange re-render
    assert browser.evaluate("location.hash") == "#outcome=fail"
    assert count(browser, ".cell") == count(browser, ".cell.fail") == 3
    browser.evaluate("document.querySelector('.bar-row[data-code=\"step_limit\"]').click()")
    browser.evaluate("new Promise(r => setTimeout(r, 50))")
    assert "code=step_limit" in browser.evaluate("location.hash") and count(browser, ".cell") == 3
    assert browser.exceptions == [] and browser.console_errors == []


def test_episode_view_shows_every_step(browser: Browser, runs: dict[str, Path], tmp_path: Path) -> None:
    page = page_file(runs["solver"], tmp_path)
    _, episodes = read_run(runs["solver"])
    episode = episodes[1]
    load(browser, page, "#ep=1")
    assert count(browser, "#episode .step") == episode.num_steps == len(episode.steps)
    assert count(browser, "#episode .step details.context") == len(episode.steps)  # collapsible context
    assert texts(browser, "#episode .step .field.raw pre")[0] == episode.steps[0].output.text  # type: ignore[union-attr]
    assert texts(browser, "#episode .step .field.obs pre") == [s.observation for s in episode.steps]
    assert browser.evaluate("document.querySelector('#episode .step details.context').open") is False


def test_paired_view_of_an_improve_output(browser: Browser, improve_dir: Path, tmp_path: Path) -> None:
    result = json.loads((improve_dir / "result.json").read_text())
    page = page_file(improve_dir, tmp_path)
    load(browser, page)
    assert browser.evaluate("document.body.dataset.tab") == "paired"
    assert texts(browser, "tr.cand td:first-child") == [c["id"] for c in result["candidates"]]
    assert sorted(texts(browser, "#comparisons a")) == ["heldout", "r1-c0", "r1-c1"]
    load(browser, page, "#cmp=heldout")
    assert sorted(texts(browser, "#rescued li")) == sorted(result["heldout"]["rescued"])
    assert count(browser, "#broken li") == len(result["heldout"]["broken"])
    assert count(browser, "tr.pair-row") == result["heldout"]["n"]
    assert count(browser, "#patch .patch-code .kw") > 0 and "def" in texts(browser, "#patch .patch-code .kw")
    rescued = result["heldout"]["rescued"][0]
    load(browser, page, f"#cmp=heldout&pair={rescued}")
    assert count(browser, "#pair .side.base .step") > 0 and count(browser, "#pair .side.patched .step") > 0
    assert count(browser, "#pair .step.diverge") == 2  # the same step index, marked on both sides
    assert texts(browser, "#pair .marker")[0].strip() == "◆ first divergence"
    assert count(browser, "#pair .side.patched .effect.point-before_action") > 0
    load(browser, page, "#tab=episodes&harness=heldout")
    assert count(browser, ".cell") == result["heldout"]["n"]


def test_pool_page(browser: Browser, tmp_path: Path) -> None:
    page = page_file(POOL, tmp_path)
    load(browser, page)
    pool = json.loads((POOL / "pool.json").read_text())
    assert count(browser, 'table[data-title="siblings"] tr') == len(pool["siblings"]) + 1
    assert count(browser, 'table[data-title="directions"] tr') == len(pool["directions"]) + 1
    assert count(browser, 'table[data-title="behaviour profile"] td.v[style]') > 0  # heat map cells


def test_training_page(browser: Browser, tmp_path: Path) -> None:
    page = page_file(TRAINING, tmp_path)
    load(browser, page)
    assert count(browser, 'section[data-title="reward per step"] path.series') == 3
    names = browser.evaluate("[...document.querySelectorAll('path.series')].map(p => p.dataset.name)")
    assert {"none", "resample", "router"} <= set(names)
    assert count(browser, 'table[data-title="methods"] tr') == 4


def test_the_checks_catch_a_request_an_exception_and_a_console_error(
    browser: Browser, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<html><body><img src="http://127.0.0.1:9/x.png">'
        '<script>console.error("boom"); notDefined();</script></body></html>',
        encoding="utf-8",
    )
    browser.open(bad.as_uri())
    assert "http://127.0.0.1:9/x.png" in browser.requests
    assert "boom" in browser.console_errors and "notDefined" in browser.exceptions[0]


def test_an_experiment_page_has_its_sections_and_a_paired_tab(
    browser: Browser, improve_dir: Path, tmp_path: Path
) -> None:
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "runs").symlink_to(improve_dir / "runs")
    (exp / "r1_config.json").write_text("{}")
    (exp / "eval.jsonl").write_text(
        json.dumps({"env": "household", "method": "none", "successes": [1.0]}) + "\n"
    )
    page = page_file(exp, tmp_path)
    load(browser, page)
    assert browser.evaluate("[...document.querySelectorAll('#tabs a')].map(a => a.dataset.tab)") == [
        "training", "paired", "episodes",
    ]  # fmt: skip
    assert count(browser, 'table[data-title="held-out success by method"] tr') == 2
    load(browser, page, "#tab=paired&cmp=heldout")
    result = json.loads((improve_dir / "result.json").read_text())
    assert (
        count(browser, "tr.pair-row") == result["heldout"]["n"] and count(browser, "#pair .step.diverge") == 2
    )


def test_trajectory_text_stays_text(browser: Browser, runs: dict[str, Path], tmp_path: Path) -> None:
    nasty = '"><b id="injected">x</b><script>document.title="pwned"</script>'
    meta, episodes = read_run(runs["random"])
    episode = episodes[0].model_copy(update={"task_id": nasty, "task_type": nasty, "instruction": nasty})
    episode.steps[0] = episode.steps[0].model_copy(update={"observation": nasty, "action": nasty})
    page = PageData(kind="run", title="t", source="s")
    page.add_run(meta, [episode])
    out = tmp_path / "nasty.html"
    out.write_text(render_html(page), encoding="utf-8")
    load(browser, out, "#ep=0")
    assert count(browser, "#injected") == 0 and browser.evaluate("document.title") == "t"
    assert nasty in texts(browser, "#episode .step .field.obs pre")[0]
    assert browser.evaluate("document.querySelector('.cell').title").startswith(nasty)
