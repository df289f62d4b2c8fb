"""The ``db`` kit: DBBench on SQLite (Harness-R1's ``dbbench``); ``--data`` loads AgentBench's task files."""

from typing import Any

from reharness.envs.kit import EnvKit


def load_data(path: str, options: dict[str, Any]) -> dict[str, Any]:
    """``--data FILE``: an AgentBench DBBench ``.jsonl`` task file."""
    return options | {"data_path": path}


KIT = EnvKit(
    name="db",
    env="reharness.envs.db.env:DBEnv",
    summary="DBBench on SQLite: generated tables or real AgentBench files; text or tool-call protocol",
    gym_id="reharness/DB-v0",
    harnesses={"base": "reharness.kits.db:harness.yaml", "fc": "reharness.kits.db:harness-fc.yaml"},
    data_loader=load_data,
    invalid_is_format=True,
    r1_benchmark="dbbench",
)
