"""``train policy --executor ray`` on a real local Ray instance (``ray.init(num_cpus=2)``) with the shipped
tiny household agent: the rollouts run on two policy actors that load the trainer's weights after every
optimizer step (one ``ray.put`` per step, hash-checked), and the run equals the local one.

What is equal and why not bit for bit: a rollout's tokens are fixed by its seed and the weights, and the
actors get the very weights the trainer holds (the hash check proves it), so the episodes, rewards, rows and
trained tokens are identical. The log-probabilities come from the actors' decoding, whose micro-batches hold
only the groups sent to that actor; another batch composition can change a float's last bits (see
``reharness.models.hf_backend``), so the log-probs, the loss and the updated weights agree to a tolerance.

Also here (it needs the same training fixtures): the engineer's GRPO reward, whose paired reruns run on the
reward's own event-loop thread, reaches the Ray executor set around the trainer.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("trl")
ray = pytest.importorskip("ray")

from test_train_policy import MICRO, metrics, tight_pool  # noqa: E402

import reharness  # noqa: E402
from reharness.runtime.ray_executor import RayExecutor, RayOptions  # noqa: E402
from reharness.training.policy_config import PolicyTrainConfig  # noqa: E402
from reharness.training.policy_train import train_policy  # noqa: E402

SRC = Path(reharness.__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
TEST_AGENTS = [HERE, HERE.parent]  # the clumsy target (targets.py -> tests/clumsy.py) for actors


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(map(str, [SRC, *TEST_AGENTS]))}},
    )
    try:
        yield
    finally:
        ray.shutdown()


SAME = ("tasks", "h0_success", "all_fail_groups", "rescues", "rescues_succeeded", "rows", "trained_tokens")


def test_ray_rollouts_train_the_same_policy_as_local(cluster: None, tmp_path: Path) -> None:
    pool = tight_pool(tmp_path / "pool")
    options = dict(MICRO, pool=str(pool), rescue="router", steps=2, save_steps=2)
    local = train_policy(PolicyTrainConfig(**options, out=str(tmp_path / "local")))
    executor = RayExecutor(RayOptions(actors=2, actor_cpus=0))
    try:
        remote = train_policy(PolicyTrainConfig(**options, out=str(tmp_path / "ray")), executor=executor)
    finally:
        asyncio.run(executor.close())
    assert local["rollouts_on"] == "local" and remote["rollouts_on"] == "ray"
    assert remote["rollouts"] == local["rollouts"] == 16 and remote["rescues"] == local["rescues"]
    assert remote["rows"] == local["rows"]
    here, there = metrics(tmp_path / "local"), metrics(tmp_path / "ray")
    assert [m["step"] for m in there] == [1, 2]
    for a, b in zip(here, there, strict=True):
        for key in SAME:
            assert a[key] == b[key], key
        assert (
            a["costs"]["episodes"] == b["costs"]["episodes"] and a["costs"]["tokens"] == b["costs"]["tokens"]
        )
        assert b["trl"]["loss"] == pytest.approx(a["trl"]["loss"], rel=1e-3, abs=1e-5)
    # one sync per distinct weights: the start, and after step 1 if its optimizer step changed them
    changed = any(m["rows"] for m in here[:1])
    assert remote["weight_syncs"] == (2 if changed else 1)
    weights = [json.loads((tmp_path / d / "model" / "config.json").read_text()) for d in ("local", "ray")]
    assert weights[0] == weights[1]
    _same_weights(tmp_path / "local" / "model", tmp_path / "ray" / "model")


def test_the_cli_trains_on_ray(cluster: None, tmp_path: Path) -> None:
    """``reharness train policy --executor ray``: the command's executor reaches the trainer's rollouts."""
    from typer.testing import CliRunner

    from reharness.cli.main import app

    pool = tight_pool(tmp_path / "pool")
    args = ["train", "policy", "--env", "household", "--agent", "tiny:household-S", "--pool", str(pool)]
    args += ["--rescue", "none", "--k", "2", "--tasks-per-step", "2", "--micro-batches", "2", "--steps", "1"]
    args += ["--concurrency", "8", "--out", str(tmp_path / "run"), "--executor", "ray", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["rollouts"] == 4
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["rollouts_on"] == "ray" and summary["weight_syncs"] == 1


def _same_weights(a: Path, b: Path) -> None:
    import torch

    from reharness.models.hf_backend import load_model_dir

    first, second = load_model_dir(a)[1].state_dict(), load_model_dir(b)[1].state_dict()
    assert first.keys() == second.keys()
    for name, tensor in first.items():
        assert torch.allclose(tensor, second[name], atol=1e-5), name


def test_weight_sync_gives_the_local_rollouts_and_stale_actors_refuse(cluster: None) -> None:
    """The engine itself: actors start from the model directory, the driver's weights differ (as after an
    optimizer step); one sync makes every actor hold them (hash-checked), the rollouts' tokens and rewards
    equal the local engine's on the same jobs, and jobs for other weights are refused."""
    import torch

    from reharness.failures import failure_codes
    from reharness.models.hf_backend import HFBackend, load_model_dir
    from reharness.models.registry import resolve_tiny
    from reharness.runtime import Harness, base_harness_config
    from reharness.training.ray_rollouts import RayRolloutEngine, StaleWeightsError
    from reharness.training.rescue import with_sampling
    from reharness.training.rollouts import Job, RolloutEngine, params_hash

    model_dir = resolve_tiny("household-S")
    tokenizer, model = load_model_dir(model_dir)
    model.eval()
    generator = torch.Generator().manual_seed(0)

    def update() -> None:  # an "optimizer step": every weight moves a little
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(1e-3 * torch.randn(parameter.shape, generator=generator))

    update()
    harness = with_sampling(
        Harness(base_harness_config("household").model_copy(update={"step_limit": 4})), 1.0
    )
    jobs = [Job(task, 100 * task + j, harness, "H0", "h0") for task in (0, 1) for j in range(2)]
    executor = RayExecutor(RayOptions(actors=2, actor_cpus=0))
    remote = RayRolloutEngine(executor, str(model_dir), "household", "train", "p", concurrency=4)
    backend = HFBackend(model_dir, policy_id="p", loaded=(tokenizer, model), max_batch_size=4)
    local = RolloutEngine("household", "train", backend, concurrency=4, annotate=failure_codes)

    async def go() -> None:
        tag = await remote.sync(model)
        assert tag == params_hash(model) and remote.syncs == 1
        assert await asyncio.gather(*[a.weights.remote() for a in remote.actors]) == [tag, tag]
        assert await remote.sync(model) == tag and remote.syncs == 1  # unchanged weights: no transfer
        there, here = await remote.run(jobs, role="h0"), await local.run(jobs, role="h0")
        assert [[s.action for s in r.record.steps] for r in there] == [
            [s.action for s in r.record.steps] for r in here
        ]
        for a, b in zip(here, there, strict=True):
            assert (a.record.success, a.record.seed, a.record.episode_index, a.task_index) == (
                b.record.success, b.record.seed, b.record.episode_index, b.task_index
            )  # fmt: skip
            assert [t.completion_ids for t in a.turns] == [t.completion_ids for t in b.turns]
            assert [t.prompt_ids for t in a.turns] == [t.prompt_ids for t in b.turns]
            for x, y in zip(a.turns, b.turns, strict=True):
                assert y.logprobs == pytest.approx(x.logprobs, abs=1e-4)
        assert sum(len(r.turns) for r in there) > 0
        assert remote.stats.episodes == {"h0": 4}
        with pytest.raises(StaleWeightsError, match="holds weights"):
            await remote.actors[0].run.remote(jobs[:1], [0], "0" * 16)
        update()
        assert await remote.sync(model) == params_hash(model) != tag and remote.syncs == 2
        await remote.close([harness])
        await local.close()
        await backend.close()

    try:
        asyncio.run(go())
    finally:
        asyncio.run(executor.close())


def test_the_grpo_reward_reruns_on_ray(cluster: None, tmp_path: Path) -> None:
    """``train engineer --stage grpo --executor ray``: the reward's paired reruns run on its own event-loop
    thread; the executor set around the trainer reaches them, and the rewards and reruns equal local ones."""
    import shutil

    from conftest import collect

    # a collection of its own: the session's micro_data/runs also holds the reruns other tests stored, and a
    # stored rerun is reused instead of run, so no actor would start
    micro_data = tmp_path / "data"
    collect(micro_data)

    from targets import SNAP, ClumsySolver
    from test_grpo import HARMFUL, _reply

    from reharness.runtime.dispatch import use_executor
    from reharness.store import open_run_dir
    from reharness.store.records import trajectory_digest
    from reharness.training.data import packet_rows, read_records
    from reharness.training.rerun import PairedRerunReward

    rows = packet_rows(read_records(micro_data), "train")[:1]
    completions, ids = [_reply(SNAP), _reply(HARMFUL)], [rows[0]["packet_id"]] * 2
    rewards, digests = {}, {}
    for name in ("local", "ray"):
        runs = tmp_path / name
        shutil.copytree(micro_data / "runs", runs)  # the collection's baselines: cached for both
        before = {p.parent for p in runs.rglob("run.json")}
        reward = PairedRerunReward(rows, runs, agents={"household": ClumsySolver()})
        executor = RayExecutor(RayOptions(actors=2, actor_cpus=0)) if name == "ray" else None
        try:
            if executor is None:
                rewards[name] = reward(prompts=[None] * 2, completions=completions, packet_id=ids)
            else:
                with use_executor(executor):
                    rewards[name] = reward(prompts=[None] * 2, completions=completions, packet_id=ids)
                assert len(executor.actors) == 2  # the reruns started the actors: they ran there
        finally:
            reward.close()
            if executor is not None:
                asyncio.run(executor.close())
        reruns = sorted({p.parent for p in runs.rglob("run.json")} - before)
        digests[name] = {p.name: trajectory_digest(open_run_dir(p).episodes()) for p in reruns}
    assert rewards["ray"] == rewards["local"] and rewards["local"][0] > 0 > rewards["local"][1]
    assert len(digests["local"]) == 2 and digests["ray"] == digests["local"]


def _alive(class_name: str) -> list[str]:
    """Actor ids of ``class_name`` that are not dead (the state API needs the dashboard, which is off)."""
    from ray._private import state

    deadline = time.monotonic() + 30  # a kill is asynchronous: wait until the GCS records it
    while True:
        ids = [
            a["ActorID"]
            for a in state.actors().values()
            if a["ActorClassName"] == class_name and a["State"] != "DEAD"
        ]
        if not ids or time.monotonic() > deadline:
            return ids
        time.sleep(0.5)


def test_policy_actors_that_cannot_load_the_model_stop_with_a_clear_error(
    cluster: None, tmp_path: Path
) -> None:
    """A model directory the actors cannot load (here: a broken config.json) fails the start with an
    executor_error that names the directory, and no policy actor is left running."""
    import shutil

    from reharness.models.registry import resolve_tiny
    from reharness.runtime.ray_actors import RayExecutorError
    from reharness.training.ray_rollouts import RayRolloutEngine

    broken = tmp_path / "broken"
    shutil.copytree(resolve_tiny("household-S"), broken)
    (broken / "config.json").write_text("{ not json", encoding="utf-8")
    executor = RayExecutor(RayOptions(actors=2, actor_cpus=0))
    engine = RayRolloutEngine(executor, str(broken), "household", "train", "p", concurrency=2)
    try:
        with pytest.raises(RayExecutorError, match="policy actors could not start") as caught:
            asyncio.run(engine.start())
        assert str(broken) in str(caught.value) and "shared filesystem" in str(caught.value)
        assert engine.actors == [] and _alive("PolicyActor") == []
    finally:
        asyncio.run(executor.close())


def test_a_model_directory_gone_from_the_path_is_shipped_to_the_actors(cluster: None, tmp_path: Path) -> None:
    """The driver reads a small model directory once; actors that cannot find the path (as on another
    node) load the shipped copy; weights of another architecture are refused with a config_error; closing
    the engine leaves no actor running."""
    import shutil

    from reharness.models.hf_backend import load_model_dir
    from reharness.models.registry import resolve_tiny
    from reharness.training.ray_rollouts import RayRolloutEngine
    from reharness.training.rollouts import params_hash

    moved = tmp_path / "model"
    shutil.copytree(resolve_tiny("household-S"), moved)
    expected = params_hash(load_model_dir(moved)[1])
    executor = RayExecutor(RayOptions(actors=2, actor_cpus=0))
    engine = RayRolloutEngine(executor, str(moved), "household", "train", "p", concurrency=2)
    shutil.rmtree(moved)

    async def go() -> list[str]:
        import torch

        from reharness.core.errors import ConfigError

        await engine.start()
        try:
            hashes = list(await asyncio.gather(*[a.weights.remote() for a in engine.actors]))
            # weights of another architecture: a clear error from the actors, not a load_state_dict trace
            with pytest.raises(ConfigError, match="cannot load the trainer's weights"):
                await engine.sync(torch.nn.Linear(2, 2))
            return hashes
        finally:
            await engine.close()

    try:
        assert asyncio.run(go()) == [expected, expected]
        assert _alive("PolicyActor") == []
    finally:
        asyncio.run(executor.close())
