"""Seeded generation of ``apps`` tasks: scenarios with three variants each, splits decided per scenario.

Task ``index`` of a split is variant ``index % 3`` of scenario ``index // 3``. A scenario is a template name
plus a scenario seed, drawn from the split's own seed stream and kept only if its content hash belongs to the
split, so the three variants of a scenario are always in the same split and splits are disjoint. Each variant
has its own world (seeded from the scenario seed and the variant), its own planted data and parameters.
"""

from __future__ import annotations

import random

from reharness.core.errors import EnvError
from reharness.core.hashing import derive_seed, stable_hash
from reharness.envs.base import Task, split_of_content
from reharness.kits.apps.scenarios import TEMPLATES
from reharness.kits.apps.world import World

VARIANTS = 3


def scenario_of(env_id: str, split: str, scenario: int) -> tuple[str, int]:
    """``(template, scenario_seed)`` of scenario number ``scenario`` of ``split``."""
    for attempt in range(10_000):
        rng = random.Random(derive_seed(env_id, split, scenario, attempt))
        template = rng.choice(sorted(TEMPLATES))
        seed = rng.getrandbits(32)
        if split_of_content(stable_hash({"template": template, "seed": seed})) == split:
            return template, seed
    raise EnvError(f"apps: could not draw scenario {scenario} of split {split!r}")


def make_task(env_id: str, split: str, index: int) -> Task:
    """Task ``index`` of ``split`` (see module docstring)."""
    scenario, variant = divmod(index, VARIANTS)
    template, scenario_seed = scenario_of(env_id, split, scenario)
    rng = random.Random(derive_seed("apps-variant", scenario_seed, variant))
    for _ in range(100):  # redraw (same rng) until the task asks something or changes something
        world_seed = rng.getrandbits(32)
        world = World({"seed": world_seed})
        draft = TEMPLATES[template](rng, world)
        spec = {"seed": world_seed, "plant": draft.plant}
        world.plant(draft.plant)  # now the world an episode of this task starts from (``World(spec)``)
        try:
            answer, changes = draft.expect(world)
        finally:
            world.db.close()
        if answer is not None or changes:
            break
    else:
        raise EnvError(f"apps: scenario {template} drew only empty tasks for {split}/{index}")
    state = {
        "world": spec,
        "scenario_id": f"{template}-{scenario_seed:08x}",
        "variant": variant,
        "apps": list(draft.apps),
        "today": world.today.isoformat(),
        "supervisor": f"{world.supervisor['first_name']} {world.supervisor['last_name']}",
    }
    gold = {"answer": answer, "changes": changes, "code": draft.code}
    return Task(f"apps/{split}/{index:06d}", split, draft.instruction, template, state, gold)
