"""Would committing a model's prose answers on DBBench have won any task? (issue 36, SmolLM2's db runs)

Usage: python -m reharness.kits.db.prose_answers RUN_DIR OUT_FILE
  RUN_DIR   a `reharness run` directory of the DBBench kit (test split)
  OUT_FILE  one JSON line per reply that states an answer in prose ("The answer (to this question) is:
            X"): the task, the step, the answer as a harness would commit it, and whether DBBench's grader
            accepts it

The model answers in prose instead of the protocol's `Final Answer: [...]` line, which the env judges a format
error. A harness repair that committed those answers is only worth building if some of them are right.
Tasks that modify the database (no label) are skipped: no answer can win them. It lives in the kit because
it is DBBench knowledge: the kit's grader judges each answer as the env would.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from reharness.envs.registry import make_env
from reharness.kits.db.env import DBEnv
from reharness.kits.db.grading import grade_v02
from reharness.store.run_store import open_run_dir

PROSE = re.compile(r"answer(?: to this question)? is:?\s*(.+)", re.IGNORECASE)


def prose_answers(run_dir: Path) -> list[dict]:
    """One row per reply of a DBBench run that states an answer in prose, graded as if it were committed."""
    store = open_run_dir(run_dir)
    env = make_env(store.read_meta().env, split="test")
    if not isinstance(env, DBEnv):
        raise SystemExit(f"{run_dir} is a run of {env.name!r}; this check grades DBBench answers")
    rows = []
    for episode in sorted(store.episodes(), key=lambda e: e.episode_index):
        task = env.task_by_id(episode.task_id)
        label = task.gold.get("label")
        if label is None:
            continue
        for step in episode.steps:
            found = PROSE.search(step.output.text if step.output else "")
            if found is None:
                continue
            answer = found.group(1).strip().split("\n")[0].strip('."').replace('"', "")
            committed = json.dumps([answer])
            rows.append(
                {
                    "task_id": episode.task_id,
                    "task_type": task.task_type,
                    "step": step.index,
                    "committed": committed,
                    "right": grade_v02(committed, label),
                }
            )
    return rows


def main(run_dir: Path, out_file: Path) -> None:
    rows = prose_answers(run_dir)
    out_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = {r["task_id"] for r in rows}
    right = {r["task_id"] for r in rows if r["right"]}
    print(f"{len(rows)} prose answers on {len(tasks)} answerable tasks; tasks they would win: {len(right)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
