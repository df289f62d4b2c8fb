"""The training tasks a start policy never saw: ``--unseen-tasks`` of ``train policy`` and ``experiment s``.

A tiny agent is trained on solver demonstrations of a seeded sample of its environment's train tasks. Rescue
training on those same tasks measures little: the agent wins most of its groups there (a text-game agent
trained on every train game won 54% of its rollouts at temperature 1, and only 3 of 40 groups failed
entirely), so there are few all-failed groups for a sibling to rescue. With ``--unseen-tasks`` the task
stream holds only the train tasks that were not among its demonstrations, recomputed from the agent's
``provenance.json`` (seed, split and demo count; :func:`reharness.training.tiny.demos.demo_task_indices`).
Only the demonstrations of the start policy's own ``agent train`` are known: a model it continued from
(``--init``) or a policy trained afterwards records no demos, so those are refused with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

from reharness.core.errors import ConfigError
from reharness.training.tiny.demos import demo_task_indices


def unseen_task_indices(start_dir: Path, env: str, split: str, num_tasks: int) -> list[int]:
    """The indices of ``split``'s ``num_tasks`` tasks that the start policy in ``start_dir`` was not shown as
    demonstrations; errors say why none can be known or none are left."""
    file = start_dir / "provenance.json"
    if not file.is_file():
        raise ConfigError(
            f"--unseen-tasks needs to know which tasks the start policy was trained on, and {start_dir} has "
            "no provenance.json",
            hint="start from a tiny agent trained by `reharness agent train` (its provenance lists the "
            "demos), or drop --unseen-tasks",
        )
    provenance = json.loads(file.read_text(encoding="utf-8"))
    recipe, data = provenance.get("recipe") or {}, provenance.get("data") or {}
    trained_env, demos = recipe.get("env"), data.get("episodes")
    if provenance.get("init"):
        raise ConfigError(
            f"{start_dir} continued training from another model, whose demonstrations are not recorded",
            hint="start from an agent trained from scratch, or drop --unseen-tasks",
        )
    if trained_env != env or data.get("split", "train") != split or not isinstance(demos, int):
        raise ConfigError(
            f"{start_dir} was trained on {trained_env!r} ({data.get('split')!r} split), not on {env!r} "
            f"({split!r}): its demonstrations say nothing about these tasks",
            hint="start from a tiny agent of this environment, or drop --unseen-tasks",
        )
    seen = set(demo_task_indices(env, demos, int(provenance["seed"]), split, num_tasks))
    unseen = [i for i in range(num_tasks) if i not in seen]
    if not unseen:
        raise ConfigError(
            f"the start policy was shown all {num_tasks} {split} tasks of {env} as demonstrations: none is "
            "left unseen",
            hint="train the agent on fewer demonstrations (e.g. `reharness agent train … --demos N` with N "
            f"below {num_tasks}), or drop --unseen-tasks",
        )
    return unseen


def check_unseen_tasks(start_dir: Path, env: str, split: str = "train") -> int:
    """How many ``split`` tasks of ``env`` the start policy in ``start_dir`` never saw, or the error
    :func:`unseen_task_indices` gives — before any pool is evolved or any method trained."""
    from reharness.envs.registry import make_env

    task_env = make_env(env, split=split)
    try:
        total = task_env.num_tasks()
    finally:
        task_env.close()
    return len(unseen_task_indices(start_dir, env, split, total))
