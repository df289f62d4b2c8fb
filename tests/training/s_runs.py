"""Finished ``experiment s`` runs' stored files, written as the experiment writes them, for the tests of the
commands that read only those files (``experiment s-seeds``, ``experiment s-compare``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.experiments.s import SConfig

#: The commands under test read stored files and never build the env, so its name is only a label: a made-up
#: one keeps these tests off the built-ins (and a second one for the different-env refusals).
STORED_ENV, OTHER_ENV = "stored-env", "other-env"


def stored_run(
    out: Path,
    seed: int,
    outcomes: dict[str, list[float]],
    pairs: list[list[object]],
    *,
    env: str,
    trained: int | None = None,
    codes: dict[str, list[list[str]]] | None = None,
    target_codes: list[str] | None = None,
    options: dict[str, Any] | None = None,
    rescues: dict[str, dict[str, int]] | None = None,
    attempts: dict[str, list[list[int]]] | None = None,
) -> Path:
    """A finished run of one ``env``: the given per-task outcomes and failure codes per method; result
    rows for the first ``trained`` methods only (Rank-1, evaluated after training, has none); ``options``
    as passed to ``experiment s``; ``rescues`` per trained method, as its training summary counts them;
    ``attempts`` per trained method, step by step, the successes of each all-failed group's rescue (its
    ``metrics.jsonl``)."""
    out.mkdir(parents=True)
    config = SConfig(envs=[env], seed=seed, out=str(out), **(options or {}))
    (out / "s_config.json").write_text(config.model_dump_json())
    records = [
        {
            "key": f"{env}/{m}",
            "env": env,
            "method": m,
            "pairs": pairs,
            "successes": s,
            "codes": (codes or {}).get(m, [[]] * len(s)),
        }
        for m, s in outcomes.items()
    ]
    (out / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    rows = [
        {"env": env, "method": m, "target_code_rate": 0.5, "tokens": 10, "model_calls": 2}
        for m in list(outcomes)[:trained]
    ]
    training = {m: {"rescues": r} for m, r in (rescues or {}).items()}
    result = {"rows": rows, "target_codes": {env: target_codes or []}, "training": {env: training}}
    (out / "result.json").write_text(json.dumps(result))
    for method, steps in (attempts or {}).items():
        lines = [
            {
                "step": step,
                "groups": len(tried),
                "all_fail_groups": len(tried),
                "rescues": [{"task_index": i, "successes": n, "attempts": 8} for i, n in enumerate(tried)],
            }
            for step, tried in enumerate(steps, start=1)
        ]
        (out / env / method).mkdir(parents=True)
        (out / env / method / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return out
