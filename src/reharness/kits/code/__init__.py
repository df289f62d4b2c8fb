"""SWE-Gym-like repository repair: generated packages with injected bugs, or real SWE-bench instance files.

Kit: :mod:`.kit` (the ``code`` :class:`~reharness.envs.EnvKit`), ``harness.yaml`` (the base harness
H0) and ``harness-fc.yaml`` (its function-calling variant, ``fc``).

- :mod:`.env`: the gymnasium env (``reharness/Code-v0``) with SWE-agent / OpenHands-style tools;
- :mod:`.schema`: the SWE-bench / SWE-Gym instance record;
- :mod:`.templates`: function templates of the generated packages: behaviour, injectable bugs, test inputs;
- :mod:`.generator`: generated instances: a small package, a unittest suite, one injected bug, an issue;
- :mod:`.loader`: real SWE-bench / SWE-Gym instance files, with the repositories the user supplies;
- :mod:`.protocol`: the actions: SWE-agent / OpenHands-style commands as text, and as tool calls;
- :mod:`.workspace`: the agent's working tree (a temporary directory) and the file tools on it;
- :mod:`.testrun`: confined test runs, parent side;
- :mod:`.runner`: the confined test runner: a standalone script printing one JSON line;
- :mod:`.diff`: unified diffs between file trees: make one, apply one strictly;
- :mod:`.expert`: scripted policies: the state-based solver and random actions;
- :mod:`.tracker`: what hooks may see of an episode (``ctx`` fields), from the agent's commands and results;
- :mod:`.failures`: failure evidence, detectors and runtime signals (edits, test runs, premature submits);
- :mod:`.operators`: repair operators: test before submitting, failing tests after an edit, edit errors;
- :mod:`.tiny`: the tiny-agent recipe: one tool command per reply.
"""

from reharness.kits.code.env import CodeEnv
from reharness.kits.code.loader import load_instances
from reharness.kits.code.schema import CodeInstance
from reharness.kits.code.testrun import TestLimits, TestRun, run_tests

__all__ = ["CodeEnv", "CodeInstance", "TestLimits", "TestRun", "load_instances", "run_tests"]
