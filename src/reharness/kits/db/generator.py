"""Seeded generation of DBBench-style tasks: a themed table plus a question or mutation of one of ten types.

The gold is computed, not written by hand: the reference SQL runs in a fresh :class:`~.sandbox.SqlSandbox`
(the same MySQL layer the agent uses); for select types the flattened result rows are the label, for
INSERT/UPDATE the table hash after the mutation is ``answer_md5``. A candidate whose reference fails, returns
nothing, or leaves the table unchanged is redrawn from the same rng, so generation stays deterministic. The
gold of a candidate that belongs to another split is never computed (:meth:`TextEnv.draw_task` drops it).
"""

from __future__ import annotations

import random
from dataclasses import replace

from reharness.core.errors import EnvError
from reharness.envs.base import Task, split_of_content
from reharness.kits.db.gold import TASK_TYPES, compute_gold, table_state
from reharness.kits.db.protocol import table_line
from reharness.kits.db.questions import BUILDERS
from reharness.kits.db.themes import make_table


def make_task(rng: random.Random, task_id: str, split: str) -> Task:
    """One generated task; only ``rng`` supplies randomness."""
    for _ in range(200):
        table = make_table(rng)
        task_type = rng.choice(TASK_TYPES)
        built = BUILDERS[task_type](rng, table)
        if built is None:
            continue
        description, sql = built
        state = {
            "table": table_state(table.name, table.columns, [list[str | None](r) for r in table.rows]),
            "description": description,
            "add_description": table_line(table.name, table.columns),
            "source": f"generated:{table.theme}",
        }
        task = Task(task_id=task_id, split=split, instruction=description, task_type=task_type, state=state)
        if split_of_content(task.content_hash()) != split:
            return task  # belongs to another split: draw_task discards it, so skip the gold
        gold = compute_gold(state, task_type, sql)
        if gold is not None:
            return replace(task, gold=gold)
    raise EnvError(f"db: could not generate a valid task for {task_id}")
