"""``--unseen-tasks``: rescue training on the train tasks a tiny start policy was not shown as demos.

The demo tasks are recomputed from the agent's provenance; the test checks them against the demos the
trainer's own renderer produces, then runs one real GRPO step from a shipped tiny agent whose provenance
says it saw all but two train tasks, so those two are the only tasks the step may draw. The environment is
the registry's first built-in, whichever that is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reharness.core.errors import ConfigError
from reharness.envs.registry import BUILTIN_KITS, make_env
from reharness.training.tiny.demos import demo_task_indices, iter_demos
from reharness.training.unseen_tasks import unseen_task_indices

ENV = next(iter(BUILTIN_KITS))


def provenance_dir(root: Path, env: str, demos: int, seed: int = 0, **extra: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    record = {"seed": seed, "recipe": {"env": env}, "data": {"episodes": demos, "split": "train"}} | extra
    (root / "provenance.json").write_text(json.dumps(record))
    return root


def test_unseen_tasks_are_exactly_the_tasks_no_demo_came_from(tmp_path: Path) -> None:
    env = make_env(ENV, split="train")
    total = env.num_tasks()
    rendered = {demo.task_id for demo in iter_demos(ENV, 5, seed=3)}
    unseen = unseen_task_indices(provenance_dir(tmp_path, ENV, 5, seed=3), ENV, "train", total)
    assert len(rendered) == 5 and len(unseen) == total - 5
    assert rendered == {env.get_task(i).task_id for i in set(range(total)) - set(unseen)}
    assert unseen == sorted(unseen)


@pytest.mark.parametrize(
    ("written", "trained_env", "demos", "extra", "says"),
    [
        (False, ENV, 5, {}, "no provenance.json"),
        (True, ENV, 5, {"init": {"path": "x"}}, "continued training from another model"),
        (True, "elsewhere", 5, {}, "was trained on 'elsewhere'"),
        (True, ENV, 50, {}, "none is left unseen"),  # all 50 tasks were demos
    ],
)
def test_what_cannot_be_known_or_is_not_left_is_refused(
    tmp_path: Path, written: bool, trained_env: str, demos: int, extra: dict[str, object], says: str
) -> None:
    if written:
        provenance_dir(tmp_path, trained_env, demos, **extra)
    with pytest.raises(ConfigError, match=says):
        unseen_task_indices(tmp_path, ENV, "train", 50)


def test_more_demos_than_tasks_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="at most 10"):
        demo_task_indices("anything", 11, 0, "train", 10)


def test_a_step_draws_only_unseen_tasks(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from reharness.models.registry import resolve_tiny
    from reharness.training.policy_config import PolicyTrainConfig
    from reharness.training.policy_train import train_policy

    start = tmp_path / "agent"
    shutil.copytree(resolve_tiny(f"{ENV}-S"), start)
    total = make_env(ENV, split="train").num_tasks()
    provenance = json.loads((start / "provenance.json").read_text())
    provenance["data"]["episodes"] = total - 2  # as if it had seen every train task but two
    (start / "provenance.json").write_text(json.dumps(provenance))
    left = unseen_task_indices(start, ENV, "train", total)
    assert len(left) == 2
    out = tmp_path / "policy"
    config = PolicyTrainConfig(
        env=ENV, agent=f"hf:{start}", rescue="none", k=2, tasks_per_step=2, micro_batches=2, steps=1,
        unseen_tasks=True, concurrency=4, out=str(out),
    )  # fmt: skip
    train_policy(config)
    (step,) = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert set(step["tasks"]) == set(left)  # the step's task indices: the only two it was never shown


def test_agent_train_demos_sets_how_many_tasks_are_seen(tmp_path: Path) -> None:
    """`agent train --demos N` trains on N demos (the passes change, the steps stay), and its provenance is
    what --unseen-tasks reads: all train tasks but N are left."""
    pytest.importorskip("trl")
    from typer.testing import CliRunner

    from reharness.cli.main import app

    out = tmp_path / "agent"
    args = ["agent", "train", "--env", ENV, "--size", "micro", "--steps", "2", "--batch-size", "1"]
    result = CliRunner().invoke(app, [*args, "--demos", "3", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["data"]["episodes"] == 3 and provenance["recipe"]["steps"] == 2
    total = make_env(ENV, split="train").num_tasks()
    assert len(unseen_task_indices(out, ENV, "train", total)) == total - 3


def test_experiment_s_refuses_unknowable_unseen_tasks_before_writing_anything(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from typer.testing import CliRunner

    from reharness.cli.main import app
    from reharness.models.registry import resolve_tiny

    start = tmp_path / "agent"
    shutil.copytree(resolve_tiny(f"{ENV}-S"), start)
    (start / "provenance.json").unlink()  # e.g. a policy trained by `train policy`: no demos recorded
    out = tmp_path / "s"
    args = ["experiment", "s", "--env", ENV, "--agent", f"hf:{start}", "--unseen-tasks", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and "no provenance.json" in result.output
    assert not out.exists()
