"""AppWorld-like ``apps``: simulated apps over per-episode SQLite, agent code in a confined interpreter.

Modules: :mod:`.env` (the gymnasium env and :func:`run_metrics`), :mod:`.world` (people, supervisor, tables),
:mod:`.server` (API specs, validation, tokens, pagination), :mod:`.handlers` / :mod:`.handlers_comm` (the
apps' APIs), :mod:`.scenarios` / :mod:`.generator` (tasks, three variants per scenario, ground-truth
programs), :mod:`.grading` (database-diff tests), :mod:`.protocol` (prompt, code extraction, tool spec).
"""

from reharness.kits.apps.env import AppsEnv, run_metrics

__all__ = ["AppsEnv", "run_metrics"]
