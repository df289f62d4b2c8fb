"""The ``code`` kit: SWE-Gym-like packages with injected bugs; ``--data`` loads SWE-bench task files."""

from pathlib import Path
from typing import Any

from reharness.envs.kit import EnvKit
from reharness.kits.code import failures
from reharness.kits.code.operators import EditErrorHint, FailingTestHint, SubmitGuard
from reharness.kits.code.tiny import TINY


def load_data(path: str, options: dict[str, Any]) -> dict[str, Any]:
    """``--data FILE``: a SWE-bench / SWE-Gym instance file; the checkouts sit in ``repos/`` next to it unless
    the harness's ``env_options`` name another ``repos_dir``."""
    return {"repos_dir": str(Path(path).parent / "repos")} | options | {"instances_path": path}


KIT = EnvKit(
    name="code",
    env="reharness.kits.code.env:CodeEnv",
    summary="SWE-Gym-like: generated packages with injected bugs, SWE-agent tools, FAIL_TO_PASS grading",
    gym_id="reharness/Code-v0",
    harnesses={"base": "reharness.kits.code:harness.yaml", "fc": "reharness.kits.code:harness-fc.yaml"},
    detectors=(failures.detect,),
    signals=failures.signals,
    operators=(SubmitGuard(), FailingTestHint(), EditErrorHint()),
    generic_operators=(),
    data_loader=load_data,
    invalid_is_format=True,
    tiny=TINY,
)
