"""SWE-Gym-like repository repair: generated packages with injected bugs, or real SWE-bench instance files.

Modules: :mod:`.env` (the gymnasium env), :mod:`.schema` (the SWE-bench instance record), :mod:`.templates` /
:mod:`.generator` (generated instances), :mod:`.loader` (real files), :mod:`.protocol` (commands and tools),
:mod:`.workspace` (the working tree and its file tools), :mod:`.testrun` / :mod:`.runner` (confined test
runs), :mod:`.diff` (unified diffs), :mod:`.expert` (solver), :mod:`.tracker` (``ctx`` fields).
"""

from reharness.kits.code.env import CodeEnv
from reharness.kits.code.loader import load_instances
from reharness.kits.code.schema import CodeInstance
from reharness.kits.code.testrun import TestLimits, TestRun, run_tests

__all__ = ["CodeEnv", "CodeInstance", "TestLimits", "TestRun", "load_instances", "run_tests"]
