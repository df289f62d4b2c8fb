"""How fast a large run's ``reharness view`` page opens in a browser (the viewer's < 3 s target).

``python benchmarks/bench_view.py [--episodes 10000] [--steps 12] [--repeats 3]`` writes a synthetic run
(household-like episodes: instruction, observations of ~150 characters, raw replies, a hook effect every few
steps, failure flags), builds its page, opens it in headless Chromium and prints JSON:

- ``build_s`` / ``page_mb``: building and writing the page (Python side);
- ``load_s``: from navigation to the load event (the page parsed, the summary, chart, 10,000-cell grid and
  the first 100 rows rendered), median of ``--repeats`` fresh loads, wall clock and the browser's own
  navigation timing (``load_event_ms``);
- ``open_episode_ms``: opening one episode (its steps are parsed only then) and ``filter_ms``: one filter;
- side by side, the two choices that keep the load fast: ``render_paged_ms`` (a render with the episode
  table paged at 100 rows, as the page does) against ``render_all_rows_ms`` (every row rendered), with
  their ratio; and ``eager_parse_ms``, what parsing every episode's steps on load would add, as a share of
  the lazy load (``eager_over_lazy``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from reharness.store.records import EpisodeRecord, PolicyOutput, RunMeta, StepRecord
from reharness.view import build_page, render_html
from reharness.view.browser import Browser, find_chromium

PLACES = ["cabinet", "drawer", "countertop", "fridge", "shelf", "desk", "sidetable", "microwave"]
TYPES = ["pick_and_place", "pick_clean_then_place", "look_at_obj"]
THINGS = ["mug", "apple", "book", "pen", "plate", "watch", "vase", "keychain"]


def synthetic_episode(i: int, steps: int, rng: random.Random) -> EpisodeRecord:
    success = rng.random() < 0.4
    records = []
    for k in range(steps if not success else rng.randint(3, steps)):
        place, thing = (
            f"{rng.choice(PLACES)} {rng.randint(1, 4)}",
            f"{rng.choice(THINGS)} {rng.randint(1, 3)}",
        )
        action = rng.choice([f"go to {place}", f"open {place}", f"take {thing} from {place}", "look"])
        invalid = rng.random() < 0.2
        obs = (
            "Nothing happens."
            if invalid
            else f"You arrive at {place}. On the {place}, you see a {thing}, "
            + ("and a " + ", a ".join(f"{rng.choice(THINGS)} {rng.randint(1, 3)}" for _ in range(4)) + ".")
        )
        effects = (
            [{"kind": "hint", "point": "after_feedback", "overlay": "p", "message": "try another"}]
            if k % 4 == 3
            else []
        )
        records.append(
            StepRecord(
                index=k,
                context_digest=f"{rng.getrandbits(64):016x}",
                output=PolicyOutput(text=f"Think: I should look for the {thing}.\nAction: {action}"),
                parsed_action=action,
                action=action,
                observation=obs,
                effects=effects,
                flags=["invalid_action"] if invalid else [],
            )  # fmt: skip
        )
    return EpisodeRecord(
        run_id="bench-view", episode_index=i, seed=i, env="household", task_id=f"household/test/{i:06d}",
        task_identity=f"{i:024x}", task_type=rng.choice(TYPES),
        instruction=f"put a clean {rng.choice(THINGS)} in {rng.choice(PLACES)}.",
        initial_observation="You are in the middle of a room. You see " + ", ".join(PLACES),
        harness_id="h0", policy_id="bench", success=success, score=float(success), num_steps=len(records),
        termination="success" if success else "step_limit", steps=records,
    )  # fmt: skip


def write_run(where: Path, episodes: int, steps: int) -> Path:
    run = where / "bench-view"
    run.mkdir(parents=True)
    meta = RunMeta(
        run_id="bench-view", config_hash="x", created="now", package_version="0", env="household",
        policy_id="bench", harness={"name": "h0", "id": "h0", "overlays": []}, seed=0, n=episodes,
        config={"split": "test"},
    )  # fmt: skip
    (run / "run.json").write_text(meta.model_dump_json(), encoding="utf-8")
    rng = random.Random(0)
    with open(run / "episodes.jsonl", "w", encoding="utf-8") as fh:
        for i in range(episodes):
            fh.write(synthetic_episode(i, steps, rng).model_dump_json() + "\n")
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if find_chromium() is None:
        raise SystemExit("no Chromium: install Debian's chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        run = write_run(Path(tmp), args.episodes, args.steps)
        start = time.perf_counter()
        page = Path(tmp) / "view.html"
        page.write_text(render_html(build_page(run)), encoding="utf-8")
        build_s = time.perf_counter() - start
        page_mb = page.stat().st_size / 1e6
        url = page.as_uri()
        loads, timings = [], []
        with Browser(timeout_s=120) as browser:
            for _ in range(args.repeats):
                loads.append(browser.open(url))
                timings.append(browser.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                assert browser.evaluate("document.querySelectorAll('.cell').length") == args.episodes
                assert not browser.exceptions and not browser.console_errors
            last = args.episodes - 1
            open_ms = browser.evaluate(
                f"(() => {{ const t = performance.now(); location.hash = 'ep={last}';"
                " window.dispatchEvent(new HashChangeEvent('hashchange'));"
                " return performance.now() - t; })()"
            )
            assert browser.evaluate("document.querySelectorAll('#episode .step').length") > 0
            filter_ms = browser.evaluate(
                "(() => { const t = performance.now(); location.hash = 'code=step_limit';"
                " window.dispatchEvent(new HashChangeEvent('hashchange'));"
                " return performance.now() - t; })()"
            )
            render = (
                "(() => {{ const t = performance.now(); location.hash = '{}';"
                " window.dispatchEvent(new HashChangeEvent('hashchange'));"
                " return performance.now() - t; }})()"
            )
            paged_ms = browser.evaluate(render.format("outcome="))
            all_rows_ms = browser.evaluate(render.format(f"page={args.episodes // 100 + 1}"))
            eager_ms = browser.evaluate(
                "(() => { const text = document.getElementById('episode-details').textContent;"
                " const off = JSON.parse(document.getElementById('page-data').textContent).offsets;"
                " const t = performance.now(); let n = 0;"
                " for (let i = 0; i + 1 < off.length; i++)"
                "   n += JSON.parse(text.slice(off[i], off[i + 1])).steps.length;"
                " return performance.now() - t; })()"
            )
    load_s = statistics.median(loads)
    print(
        json.dumps(
            {
                "episodes": args.episodes,
                "steps_per_episode": args.steps,
                "page_mb": round(page_mb, 1),
                "build_s": round(build_s, 2),
                "load_s": round(load_s, 3),
                "load_s_all": [round(x, 3) for x in loads],
                "load_event_ms": round(statistics.median(timings), 1),
                "open_episode_ms": round(open_ms, 1),
                "filter_ms": round(filter_ms, 1),
                "render_paged_ms": round(paged_ms, 1),
                "render_all_rows_ms": round(all_rows_ms, 1),
                "all_rows_over_paged": round(all_rows_ms / paged_ms, 1),
                "eager_parse_ms": round(eager_ms, 1),
                "eager_over_lazy": round(eager_ms / 1000 / load_s, 2),
                "under_3_s": load_s < 3.0,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
