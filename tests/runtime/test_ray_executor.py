"""The Ray executor on a real local Ray instance (``ray.init(num_cpus=2)``, shared by the module).

- the same ``trajectory_digest`` as the local executor, through the real CLI, on two environments;
- an actor killed mid-run (``ray.kill``): its episodes are sent again and every episode is stored once;
- a driver killed with SIGKILL mid-run: rerunning resumes, keeps what was stored, completes the rest;
- without ``ray`` installed, ``--executor ray`` fails with the install command and writes nothing.

The test actors reserve no CPU (``actor_cpus=0``), so executors of several tests and a second driver fit
in the two-CPU instance next to the CLI's default actors.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reharness
from reharness.cli.main import app
from reharness.failures.detectors import failure_codes
from reharness.runtime import Harness, RunSpec, SolverAgent, run_batch
from reharness.store import open_run_dir
from reharness.store.records import trajectory_digest

HERE = Path(__file__).resolve().parent
SRC = Path(reharness.__file__).resolve().parent.parent  # the reharness the workers must import too
PYTHONPATH = os.pathsep.join([str(SRC), str(HERE)])
HOUSEHOLD = Harness.base("household")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray instance for the module; yields its address (for a second driver)."""
    ray = pytest.importorskip("ray")
    # on a loaded machine Ray's agents can take longer than its default to start (the raylet then aborts)
    os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PYTHONPATH": PYTHONPATH}},
    )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def cli_run(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["run", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def stored_indices(run_dir: str | Path) -> list[int]:
    lines = (Path(run_dir) / "episodes.jsonl").read_text().splitlines()
    return [json.loads(line)["episode_index"] for line in lines if line.endswith("}")]


@pytest.mark.parametrize(("env", "n"), [("household", 12), ("db", 10)])
def test_same_digest_as_the_local_executor(cluster: str, env: str, n: int, tmp_path: Path) -> None:
    local = cli_run("--env", env, "--n", str(n), "--out", str(tmp_path / "local"))
    remote = cli_run(
        "--env", env, "--n", str(n), "--out", str(tmp_path / "ray"), "--executor", "ray", "--ray-actors", "2"
    )
    assert remote["trajectory_digest"] == local["trajectory_digest"]
    assert remote["run_id"] == local["run_id"]  # the executor is not part of the run's identity
    assert remote["success_rate"] == local["success_rate"] == 1.0
    assert sorted(stored_indices(str(remote["out"]))) == list(range(n))
    # the ray run resumes with the local executor: nothing left to run, nothing run twice
    again = cli_run("--env", env, "--n", str(n), "--out", str(tmp_path / "ray"))
    assert again["trajectory_digest"] == local["trajectory_digest"]
    assert sorted(stored_indices(str(remote["out"]))) == list(range(n))


def run_digests(out: Path) -> dict[str, str]:
    """run id -> trajectory digest of every run directory under ``out`` (improve's baseline, reruns, …)."""
    return {
        path.parent.name: trajectory_digest(open_run_dir(path.parent).episodes())
        for path in out.rglob("run.json")
    }


def test_improve_on_ray_plays_the_same_batches(cluster: str, tmp_path: Path) -> None:
    """``improve --executor ray``: the baseline and the paired reruns (with the candidates' sandboxed
    hooks, run in the actors' own sandbox workers) give the local executor's runs and decisions."""
    args = ["improve", "--env", "household", "--agent", "random", "--engineer", "operators"]
    args += ["--batch-size", "4", "--k", "1", "--eval-n", "4", "--json"]
    outcomes = []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-actors", "2"])):
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / name), *extra])
        assert result.exit_code == 0, result.output
        outcomes.append(json.loads(result.stdout.strip().splitlines()[-1]))
    assert outcomes[0] == outcomes[1]
    local, remote = run_digests(tmp_path / "local"), run_digests(tmp_path / "ray")
    assert len(local) >= 2 and local == remote  # baseline + candidate rerun(s): same ids, same digests


def routed_pool(root: Path) -> Path:
    """A saved pool whose H0 has a 3-step budget (no household task fits) and one sibling with 30 steps,
    profiled on the solver's valid episodes, plus strong evidence that the sibling helps on every other task
    type and hurts on the rest: Rank-1 routing sends tasks to both harnesses."""
    from reharness.envs.registry import make_env
    from reharness.failures import failure_codes
    from reharness.kits.household.catalog import TASK_TYPES
    from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions
    from reharness.pool.pool import load_pool
    from reharness.pool.profile import ProfileCell, measure_profile
    from reharness.runtime import EpisodeRunner, base_harness_config

    h0 = base_harness_config("household").model_copy(update={"step_limit": 3})
    sibling = Sibling(
        name="long", direction="loop_recovery", base=h0, delta={"step_limit": 30}, description=""
    )
    pool = Pool("household", h0, [sibling], PolicyRef(spec="solver"), builtin_directions())
    pool.save(root)

    async def episodes(harness: Harness) -> list:  # type: ignore[type-arg]
        env, out = make_env("household", split="valid"), []
        for i in range(4):
            record = await EpisodeRunner(env, SolverAgent(), harness).run(env.get_task(i), seed=0)
            record.failure_codes = failure_codes(record)
            out.append(record)
        return out

    base, other = asyncio.run(episodes(Harness(h0))), asyncio.run(episodes(sibling.harness()))
    profile = measure_profile(pool, base, {sibling.id: other}, policy=PolicyRef(spec="solver"), split="valid")
    helps = ProfileCell(attempts=40, h0_failures=40, rescues=40, successes=40)
    hurts = ProfileCell(attempts=40, breaks=40)
    profile.by_task_type[sibling.id] = {
        t: helps if i % 2 else hurts for i, t in enumerate(sorted(TASK_TYPES))
    }
    profile.save(load_pool(root))
    return root


def test_a_routed_run_on_ray_equals_the_local_one(cluster: str, tmp_path: Path) -> None:
    """``run --pool POOL --route rank1 --executor ray``: the driver routes each task, the actors play it
    under the chosen harness; same run id, digest and routing as the local executor."""
    pool = routed_pool(tmp_path / "pool")
    args = ["--env", "household", "--n", "6", "--pool", str(pool), "--route", "rank1"]
    local = cli_run(*args, "--out", str(tmp_path / "local"))
    remote = cli_run(*args, "--out", str(tmp_path / "ray"), "--executor", "ray", "--ray-actors", "2")
    assert remote["trajectory_digest"] == local["trajectory_digest"] and remote["run_id"] == local["run_id"]
    assert remote["routing"] == local["routing"] and sum(remote["routing"].values()) == 6  # type: ignore[union-attr]
    assert len(remote["routing"]) == 2  # type: ignore[arg-type]  # both harnesses were played on the actors
    assert remote["success_rate"] == local["success_rate"] > 0


def episode_actors() -> int:
    """How many episode actors this Ray instance has started so far (alive or ended): a command that ran
    on Ray raises it, one that silently ran locally does not (the state API needs the dashboard, off here)."""
    from ray._private import state

    return sum(a["ActorClassName"] == "EpisodeActor" for a in state.actors().values())


class StrayRoute:
    """A route that declares H0 but picks another harness (a bug in a user's route)."""

    identity = "stray"

    async def harness_for(self, task: object, index: int) -> Harness:
        return Harness(HOUSEHOLD.config.model_copy(update={"step_limit": 7}))

    def harnesses(self) -> list[Harness]:
        return [HOUSEHOLD]


def test_a_route_choosing_an_undeclared_harness_is_a_config_error(cluster: str, tmp_path: Path) -> None:
    from reharness.core.errors import ConfigError
    from reharness.runtime.ray_executor import RayExecutor, RayOptions

    spec = RunSpec(env="household", agent="solver", n=2, seed=0, concurrency=2)

    async def go() -> None:
        async with RayExecutor(RayOptions(actors=1, actor_cpus=0)) as executor:
            await run_batch(spec, SolverAgent(), HOUSEHOLD, tmp_path, route=StrayRoute(), executor=executor)

    with pytest.raises(ConfigError, match="not one of the harnesses it declares") as caught:
        asyncio.run(go())
    assert "route.harnesses()" in str(caught.value)


def test_pool_eval_on_ray_equals_the_local_table(cluster: str, tmp_path: Path) -> None:
    tables, started = [], []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-actors", "2"])):
        pool = routed_pool(tmp_path / name)  # its own pool: the Ray run must not find the local runs stored
        before = episode_actors()
        args = ["pool", "eval", str(pool), "--agent", "solver", "--n", "4", "--json", *extra]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        tables.append(json.loads(result.stdout.strip().splitlines()[-1]))
        started.append(episode_actors() - before)
    assert tables[0] == tables[1] and tables[0]["n"] == 4
    assert started[0] == 0 and started[1] >= 2  # the Ray run's episodes were played by its actors


def test_pool_reanchor_on_ray_writes_the_local_profile(cluster: str, tmp_path: Path) -> None:
    """``pool reanchor --executor ray``: H0's and the sibling's episodes run on the actors, and the
    re-anchored profile equals the one measured locally."""
    profiles, started = [], []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-actors", "2"])):
        pool = routed_pool(tmp_path / name)
        before = episode_actors()
        args = ["pool", "reanchor", str(pool), "--agent", "solver", "--n", "3", "--json", *extra]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        summary = json.loads(result.stdout.strip().splitlines()[-1])
        assert summary["tasks"] == 3
        started.append(episode_actors() - before)
        profile = json.loads(Path(summary["profile"]).read_text(encoding="utf-8"))
        profiles.append({k: v for k, v in profile.items() if k not in ("created", "created_at")})
    assert started[0] == 0 and started[1] >= 2
    assert profiles[0] == profiles[1]


def test_train_engineer_collects_on_ray_as_locally(cluster: str, tmp_path: Path) -> None:
    """``train engineer --stage data --executor ray``: the baselines and the teacher's paired reruns run on
    the actors; the packets and every run directory equal the local collection's."""
    args = ["train", "engineer", "--env", "household", "--stage", "data", "--agent", "random"]
    args += ["--batches", "1", "--valid-batches", "0", "--batch-size", "3", "--teacher-k", "1"]
    args += ["--max-steps", "8", "--json"]
    summaries, started = [], []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-actors", "2"])):
        before = episode_actors()
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / name), *extra])
        assert result.exit_code == 0, result.output
        summaries.append(json.loads(result.stdout.strip().splitlines()[-1]))
        started.append(episode_actors() - before)
    assert summaries[0]["data"] == summaries[1]["data"] and summaries[0]["data"]["batches"] == 1
    assert started[0] == 0 and started[1] >= 2  # the collection ran on the actors
    local, remote = run_digests(tmp_path / "local"), run_digests(tmp_path / "ray")
    assert len(local) >= 2 and local == remote  # the baseline and the teacher's rerun(s)


def test_a_served_model_is_called_from_the_actors(cluster: str, tmp_path: Path) -> None:
    """``--agent openai:…`` with the Ray executor: the actors call the server (a local OpenAI-compatible
    server answering like vLLM: choices, usage, logprobs); the trajectories match the local executor's."""
    from reharness.models.server import ChatServer, ServerThread
    from reharness.runtime import FunctionAgent

    (tmp_path / "h.yaml").write_text("step_limit: 3\n")
    server = ChatServer(FunctionAgent(lambda request: "Action: look"), model_name="m")
    with ServerThread(server):
        args = ["--env", "household", "--agent", f"openai:m@{server.base_url}", "--n", "4"]
        args += ["--harness", str(tmp_path / "h.yaml")]
        local = cli_run(*args, "--out", str(tmp_path / "local"))
        served = len(server.request_times)
        remote = cli_run(*args, "--out", str(tmp_path / "ray"), "--executor", "ray")
    assert served == 12 and len(server.request_times) == 24  # 4 episodes x 3 steps, once per executor
    assert remote["valid_replies"] == remote["model_requests"] == 12
    assert remote["trajectory_digest"] == local["trajectory_digest"]


def test_an_actor_killed_mid_run_has_its_episodes_retried(cluster: str, tmp_path: Path) -> None:
    import ray
    from ray_agents import SlowSolver

    from reharness.runtime.ray_executor import RayExecutor, RayOptions

    spec = RunSpec(env="household", agent="solver", n=16, seed=7, concurrency=8)
    harness = HOUSEHOLD
    local = asyncio.run(run_batch(spec, SlowSolver(delay=0), harness, tmp_path / "local"))
    executor = RayExecutor(RayOptions(actors=2, actor_cpus=0))
    killed: list[object] = []

    def kill_first_actor(record: object) -> None:
        if not killed:  # actor 0 still has episodes in flight (4 slots, 9 slow steps each)
            killed.append(executor.actors[0])
            ray.kill(executor.actors[0])

    async def go() -> object:
        async with executor:
            return await run_batch(
                spec,
                SlowSolver(delay=0.03),
                harness,
                tmp_path / "ray",
                on_episode=kill_first_actor,
                annotate=failure_codes,
                executor=executor,
            )

    result = asyncio.run(go())
    assert killed and executor.deaths == 1 and executor.retried >= 1
    assert sorted(stored_indices(result.out)) == list(range(16))  # every episode exactly once
    assert result.digest == local.digest and result.success_rate == 1.0
    assert all(e.failure_codes == [] for e in result.episodes)  # annotated on the actors


SCRIPT = """
import asyncio, sys
import ray
from ray_agents import SlowSolver
from reharness.runtime import Harness, RunSpec, SolverAgent, run_batch
from reharness.store import open_run_dir
from reharness.store.records import trajectory_digest
from reharness.runtime.ray_executor import RayExecutor, RayOptions

ray.init(address={address!r}, log_to_driver=False, logging_level="WARNING",
         runtime_env={{"env_vars": {{"PYTHONPATH": {pythonpath!r}}}}})
spec = RunSpec(env="household", agent="solver", n=40, seed=3, concurrency=4)

async def go():
    async with RayExecutor(RayOptions(actors=2, actor_cpus=0)) as executor:
        await run_batch(spec, SlowSolver(delay=float(sys.argv[1])), Harness.base("household"), {out!r},
                        executor=executor)

asyncio.run(go())
"""


def test_a_driver_killed_mid_run_resumes(cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    script = textwrap.dedent(SCRIPT.format(address=cluster, pythonpath=PYTHONPATH, out=str(out)))
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    proc = subprocess.Popen([sys.executable, "-c", script, "0.05"], env=env)
    jsonl = None
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:
        found = list(out.glob("*/episodes.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 5:
            jsonl = found[0]
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert jsonl is not None, "the run did not start writing episodes"
    before = stored_indices(jsonl.parent)
    assert 5 <= len(before) < 40
    subprocess.run([sys.executable, "-c", script, "0"], env=env, check=True, timeout=120)
    after = stored_indices(jsonl.parent)
    assert sorted(after) == list(range(40))  # nothing lost, nothing twice
    assert after[: len(before)] == before  # the stored episodes were kept, not rerun
    local = asyncio.run(
        run_batch(RunSpec(env="household", agent="solver", n=40, seed=3), SolverAgent(), HOUSEHOLD, tmp_path)
    )
    assert jsonl.parent.name == local.run_id
    assert trajectory_digest(open_run_dir(jsonl.parent).episodes()) == local.digest


def test_executor_ray_without_ray_names_the_install_command(tmp_path: Path) -> None:
    """A Python where ``import ray`` fails: the command exits 2 with the install command, writes nothing."""
    code = (
        "import sys; sys.modules['ray'] = None\n"  # what an environment without ray does on import
        "from reharness.cli.main import app\n"
        "app(['run', '--env', 'db', '--n', '2', '--executor', 'ray', '--out', sys.argv[1]])\n"
    )
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "pip install 'reharness[ray]'" in proc.stderr and "--executor ray" in proc.stderr
    assert not out.exists()


def test_importing_the_executor_modules_does_not_import_ray() -> None:
    code = (
        "import sys, reharness.runtime.dispatch, reharness.runtime.ray_executor, reharness.cli.scale\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
