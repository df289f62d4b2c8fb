"""DBBench (AgentBench) on SQLite: generated tables or the real task files, text or tool-call protocol.

Modules: :mod:`.env` (the gymnasium env), :mod:`.protocol` (v0.2 text and tools), :mod:`.grading` (graders and
table hash), :mod:`.sandbox` (per-episode SQLite), :mod:`.dialect` / :mod:`.functions` / :mod:`.sqltext` (the
MySQL layer), :mod:`.generator` / :mod:`.themes` / :mod:`.questions` / :mod:`.vocab` (generated tasks),
:mod:`.loader` (real files), :mod:`.gold`, :mod:`.expert`, :mod:`.tracker`.
"""

from reharness.kits.db.env import DBEnv
from reharness.kits.db.loader import load_dbbench
from reharness.kits.db.sandbox import ExecResult, SandboxLimits, SqlSandbox

__all__ = ["DBEnv", "ExecResult", "SandboxLimits", "SqlSandbox", "load_dbbench"]
