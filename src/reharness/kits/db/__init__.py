"""DBBench (AgentBench) on SQLite: generated tables or the real task files, text or tool-call protocol.

Kit: :mod:`.kit` (the ``db`` :class:`~reharness.envs.EnvKit`, Harness-R1's ``dbbench``),
``harness.yaml`` (the base harness H0) and ``harness-fc.yaml`` (its function-calling variant, ``fc``).

- :mod:`.env`: the gymnasium env (``reharness/DB-v0``);
- :mod:`.protocol`: DBBench's two agent protocols: the v0.2 text format and the function-calling tools;
- :mod:`.sandbox`: an in-memory SQLite database per episode that runs untrusted agent SQL safely;
- :mod:`.sqltext`: a small MySQL-flavoured SQL tokenizer (the first stage of the MySQL layer);
- :mod:`.dialect`: one MySQL statement translated into SQLite, or a MySQL command recognised to emulate;
- :mod:`.functions`: MySQL semantics installed into SQLite: collation, LIKE, REGEXP and SQL functions;
- :mod:`.grading`: the table hash for INSERT/UPDATE tasks and the answer graders for select types;
- :mod:`.gold`: task gold computed by running reference SQL;
- :mod:`.generator`: seeded DBBench-style tasks: a themed table plus a question or mutation;
- :mod:`.themes`: seeded Wikipedia-like tables (league tables, elections, films, countries …);
- :mod:`.vocab`: word pools for the generated tables;
- :mod:`.questions`: natural-language tasks over a generated table, one builder per AgentBench task type;
- :mod:`.loader`: real AgentBench task files (``dev.jsonl``, ``standard.jsonl``) as :class:`Task` records;
- :mod:`.expert`: scripted policies: the state-based expert, the gold player for real files, random actions;
- :mod:`.intent`: where an SQL statement contradicts its question's wording (MIN for "highest", …);
- :mod:`.failures`: failure evidence, detectors, runtime signals, action identity and packet masking;
- :mod:`.operators`: repair operators: schema hints, matching hints, premature-answer guard;
- :mod:`.tracker`: what hooks may see of an episode: the DBBench ``ctx`` fields, from observable events only;
- :mod:`.r1`: Harness-R1's DBBench ``ctx`` adapter (``action``, ``state``, ``task``, ``dbbench``, …);
- :mod:`.near_miss`: near-miss perturbations: the expert's SQL with one mistake a tiny agent makes;
- :mod:`.notes`: harness notes made only of what a harness can observe, for demonstrations;
- :mod:`.tiny`: the tiny-agent recipe: recipes, perturbations, near misses and notes;
- :mod:`.prose_answers`: a run's prose answers graded as if committed (would a format repair win anything?).
"""

from reharness.kits.db.env import DBEnv
from reharness.kits.db.loader import load_dbbench
from reharness.kits.db.sandbox import ExecResult, SandboxLimits, SqlSandbox

__all__ = ["DBEnv", "ExecResult", "SandboxLimits", "SqlSandbox", "load_dbbench"]
