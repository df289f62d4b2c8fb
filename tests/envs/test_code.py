"""The ``code`` env (SWE-Gym-like): generated instances, tools, confined test runs, grading, loader, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reharness.envs import make_env
from reharness.kits.code import CodeEnv, CodeInstance, load_instances, run_tests
from reharness.kits.code.diff import apply_diff, make_diff
from reharness.kits.code.protocol import Command, render
from reharness.kits.code.schema import tree_hash
from reharness.kits.code.templates import BUG_KINDS
from reharness.runtime import EpisodeRunner, Harness, SolverAgent
from reharness.runtime.harness import load_harness_config


def solve(env: CodeEnv, task: int | str, seed: int = 0) -> tuple[dict, list[str]]:
    env.reset(seed=seed, options={"task": task})
    actions: list[str] = []
    while True:
        action = env.expert_action()
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info, actions


def submit_tree(env: CodeEnv, files: dict[str, str]) -> dict:
    """Grade ``files`` as the agent's final tree."""
    return env.grade(files)


@pytest.fixture(scope="module")
def env() -> CodeEnv:
    return make_env("code", split="test")


@pytest.mark.parametrize("split", ["train", "valid", "test"])
def test_solver_resolves_a_sample_of_each_split(split: str) -> None:
    env = make_env("code", split=split)
    for index in range(4):
        info, actions = solve(env, index)
        assert info["success"] and info["resolved"], (split, index, actions)
        assert actions[-1] == "submit" and any(a.startswith("str_replace") for a in actions)
        assert info["patch"].startswith("diff --git")
    env.close()


def test_instances_follow_the_swebench_schema_and_splits_are_disjoint() -> None:
    env = make_env("code", split="train")
    seen: dict[str, str] = {}
    kinds = set()
    for split in ("train", "valid", "test"):
        for index in range(12):
            task = env.generate_task(split, index)
            instance = CodeInstance(**dict(task.state), patch=task.gold["patch"])
            assert instance.base_commit == tree_hash(instance.files)
            assert instance.FAIL_TO_PASS and len(instance.PASS_TO_PASS) >= 3
            assert not set(instance.FAIL_TO_PASS) & set(instance.PASS_TO_PASS)
            assert "tests/" not in instance.patch and instance.test_patch.count("diff --git") == 1
            assert len([p for p in instance.files if p.endswith(".py") and not p.startswith("tests")]) >= 4
            kinds.add(task.task_type)
            assert seen.setdefault(task.content_hash(), split) == split
    assert kinds <= set(BUG_KINDS) and len(kinds) >= 5


def test_unchanged_tree_is_not_resolved_and_gold_is(env: CodeEnv) -> None:
    env.reset(seed=0, options={"task": 1})
    _, reward, terminated, _, info = env.step("submit")
    assert terminated and reward == 0.0 and not info["success"] and info["patch"] == ""
    env.reset(seed=0, options={"task": 1})
    assert submit_tree(env, env.target_files())["resolved"]


def test_a_diff_that_breaks_pass_to_pass_is_not_resolved(env: CodeEnv) -> None:
    env.reset(seed=0, options={"task": 2})
    assert env.instance is not None
    target = env.target_files()
    victim_test = env.instance.PASS_TO_PASS[0]
    module = victim_test.split("::")[0].replace("tests/test_", "").removesuffix(".py")
    source = next(p for p in target if p.endswith(f"/{module}.py"))
    broken = dict(target)
    broken[source] = (
        target[source].replace("return ", "return None or ", 1).replace("    return", "    return 0 and ", 2)
    )
    grade = submit_tree(env, broken)
    assert not grade["resolved"]
    assert grade["pass_to_pass"]["passed"] < grade["pass_to_pass"]["total"]


def test_edit_errors_are_clear_and_change_nothing(env: CodeEnv) -> None:
    env.reset(seed=0, options={"task": 0})
    assert env.workspace is not None
    before = env.workspace.files()
    path = next(p for p in before if p.endswith(".py") and not p.startswith("tests") and "__init__" not in p)

    def obs(command: Command) -> str:
        return env.step(render(command))[0]

    assert "old text not found" in obs(Command("str_replace", path=path, old="no such text\n", new="x"))
    assert "occurs" in obs(Command("str_replace", path=path, old="return", new="return"))
    assert "times in" in obs(Command("str_replace", path=path, old="return", new="yield"))
    assert "outside" in obs(Command("view", path="/etc/passwd")) or "not a path" in obs(
        Command("view", path="/etc/passwd")
    )
    assert "not a path" in obs(Command("str_replace", path="../x.py", old="a", new="b"))
    assert "does not exist" in obs(Command("view", path="nope.py"))
    assert "out of range" in obs(Command("insert", path=path, line=10_000, new="x = 1"))
    assert obs(Command("view", path=path, start=0, end=3)).startswith("Error:")
    first, _, _, _, info = env.step("please fix it")
    assert first.startswith("Error: no command") and info["invalid_action"]
    assert env.workspace.files() == before
    state = env.runtime_state()["state"]
    assert state["edit_errors"] == 5 and state["edits"] == 0 and state["format_errors"] == 1


def test_view_search_and_edits_work(env: CodeEnv) -> None:
    env.reset(seed=0, options={"task": 0})
    assert env.workspace is not None
    listing = env.step("view .")[0]
    assert "tests/" in listing and "README.md" in listing
    path = next(
        p for p in env.workspace.files() if p.endswith(".py") and "tests" not in p and "init" not in p
    )
    text = env.step(render(Command("view", path=path, start=1, end=3)))[0]
    assert text.splitlines()[1].startswith("   1| ") and text.splitlines()[3].startswith("   3| ")
    assert "more lines: view" in text.splitlines()[4]
    assert f"{path}:" in env.step(render(Command("search", pattern="def ", path=".")))[0]
    inserted = env.step(render(Command("insert", path=path, line=0, new="# top comment")))[0]
    assert inserted.startswith("[Edited") and env.workspace.read(path).startswith("# top comment\n")
    replaced = env.step(render(Command("str_replace", path=path, old="# top comment\n", new="# changed\n")))
    assert replaced[0].startswith("[Edited") and env.workspace.read(path).startswith("# changed\n")
    assert env.runtime_state()["state"]["edits"] == 2


def test_infinite_loop_in_tests_times_out_and_the_episode_continues() -> None:
    env = CodeEnv(split="test", test_limits={"wall_s": 4.0, "per_test_s": 1.0})
    env.reset(seed=0, options={"task": 0})
    assert env.workspace is not None and env.instance is not None
    path = next(p for p in env.workspace.files() if p.startswith("tests/test_"))
    env.step(render(Command("insert", path=path, line=0, new="while True:\n    pass")))
    obs, _, terminated, truncated, info = env.step("run_tests")
    assert obs.startswith("Error: the test run timed out") and not (terminated or truncated)
    assert info["error_kind"] == "tests_timeout"
    # a loop inside one test hits that test's alarm; the rest of the run still reports
    target = env.instance.FAIL_TO_PASS[0]
    env.step(render(Command("str_replace", path=path, old="while True:\n    pass\n", new="")))
    cls, method = target.split("::")[1:]
    marker = f"    def {method}(self):\n"
    env.step(
        render(
            Command(
                "str_replace", path=path, old=marker, new=marker + "        while True:\n            pass\n"
            )
        )
    )
    obs, *_ = env.step(render(Command("run_tests", tests=(target, env.instance.PASS_TO_PASS[0]))))
    assert f"TIMEOUT {target}" in obs and "1 passed, 1 failed" in obs
    assert env.step("view .")[0].startswith("[Directory")
    env.close()


def test_the_test_subprocess_is_confined(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    test = f"""
import os, socket, unittest


class TestEscape(unittest.TestCase):
    def test_write_outside(self):
        with open({str(outside)!r}, "w") as fh:
            fh.write("escaped")

    def test_socket(self):
        socket.create_connection(("127.0.0.1", 9), timeout=1)

    def test_fork(self):
        os.fork()

    def test_subprocess(self):
        import subprocess
        subprocess.run(["/bin/true"])

    def test_read_outside(self):
        with open("/etc/passwd") as fh:
            fh.read()

    def test_signal_parent(self):
        os.kill(os.getppid(), 9)

    def test_write_inside(self):
        with open("made_here.txt", "w") as fh:
            fh.write("fine")
        os.remove("made_here.txt")
"""
    run = run_tests({"tests/__init__.py": "", "tests/test_escape.py": test})
    assert not run.error, run.error
    base = "tests/test_escape.py::TestEscape::"
    assert run.results[base + "test_write_inside"] == "passed"
    escapes = ("test_write_outside", "test_socket", "test_fork", "test_subprocess", "test_read_outside")
    for name in (*escapes, "test_signal_parent"):
        assert run.results[base + name] == "error", (name, run.messages.get(base + name))
    assert not outside.exists()
    assert run.caps["landlock"] and run.caps["seccomp"] and run.caps["no_new_privs"]


def test_tests_hidden_mode_starts_at_base_commit() -> None:
    env = CodeEnv(split="test", tests="hidden")
    env.reset(seed=0, options={"task": 3})
    assert env.instance is not None and env.workspace is not None
    assert env.workspace.files() == dict(env.instance.files)
    info, actions = solve(env, 3)
    assert info["resolved"] and "run_tests" in actions
    env.close()


def test_diffs_round_trip() -> None:
    old = {"a.py": "x = 1\ny = 2\n", "gone.py": "bye\n", "b.txt": "no newline"}
    new = {"a.py": "x = 1\ny = 3\nz = 4\n", "c.py": "new\n", "b.txt": "no newline, changed"}
    assert apply_diff(old, make_diff(old, new)) == new
    assert make_diff(new, new) == ""


def test_schema_round_trip_and_real_instance_loader(tmp_path: Path) -> None:
    env = make_env("code", split="valid")
    task = env.generate_task("valid", 0)
    instance = CodeInstance(**dict(task.state), patch=task.gold["patch"])
    row = instance.swebench_row()
    assert isinstance(row["FAIL_TO_PASS"], str) and "files" not in row
    assert CodeInstance.model_validate(json.loads(json.dumps(row))).model_dump(
        exclude={"files", "bug_kind"}
    ) == (instance.model_dump(exclude={"files", "bug_kind"}))
    # a "real" instance file: rows without files, the repository checked out on disk (owner__name)
    repos = tmp_path / "repos"
    checkout = repos / instance.repo.replace("/", "__")
    for path, text in instance.files.items():
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_text(text)
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps(row) + "\n")
    assert load_instances(data)[0].instance_id == instance.instance_id
    real = CodeEnv(instances_path=data, repos_dir=repos)
    assert real.split == "data" and real.num_tasks() == 1
    info, _ = solve(real, 0)
    assert info["resolved"]
    real.reset(seed=0, options={"task": instance.instance_id})
    assert not real.step("submit")[-1]["resolved"]
    with pytest.raises(Exception, match="no checkout"):
        CodeEnv(instances_path=data, repos_dir=tmp_path / "empty")
    # the same file through the CLI: --data, the checkouts in repos/ next to it
    proc = subprocess.run(
        [sys.executable, "-m", "reharness", "run", "--env", "code", "--agent", "solver", "--data", str(data)]
        + ["--out", str(tmp_path / "runs"), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["n"] == 1 and summary["success_rate"] == 1.0 and summary["env_errors"] == 0
    moved = tmp_path / "elsewhere" / "instances.jsonl"
    moved.parent.mkdir()
    moved.write_text(data.read_text())
    proc = subprocess.run(
        [sys.executable, "-m", "reharness", "run", "--env", "code", "--agent", "solver", "--data", str(moved)]
        + ["--out", str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and "no checkout" in proc.stderr and "Traceback" not in proc.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x"}) + "\n")
    with pytest.raises(Exception, match="lacks"):
        load_instances(bad)


def test_tool_call_protocol_through_the_fc_harness() -> None:
    env = make_env("code", split="test", protocol="fc")
    root = Path(__file__).resolve().parents[2]
    harness = Harness(load_harness_config(root / "src/reharness/kits/code/harness-fc.yaml"))

    async def go() -> list[bool]:
        runner = EpisodeRunner(env, SolverAgent(), harness)
        return [(await runner.run(env.get_task(i), seed=i)).success for i in range(3)]

    assert all(asyncio.run(go()))
    assert {t["function"]["name"] for t in env.tools()} == {
        "view",
        "search",
        "str_replace",
        "insert",
        "run_tests",
        "submit",
    }


def test_cli_run_solver_is_complete_and_reproducible(tmp_path: Path) -> None:
    def run(out: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "reharness", "run", "--env", "code", "--agent", "solver", "--n", "10"]
            + ["--out", str(tmp_path / out), "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ),
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    first, again = run("a"), run("b")
    assert first["success_rate"] == 1.0 and first["n"] == 10 and first["env_errors"] == 0
    assert first["trajectory_digest"] == again["trajectory_digest"]


@pytest.mark.parametrize(
    "action",
    [
        "view " + "x" * 200_000,
        "search " + "'" * 100_000,
        "```" * 60_000,
        "str_replace a.py\n<<<<<<< SEARCH\n" + "x" * 400_000 + "\n=======\ny\n>>>>>>> REPLACE",
        "insert a.py 1\n<<<<<<< TEXT\n" + "x\n" * 300_000,
        "run_tests " + "t::x " * 40_000,
    ],
)
def test_a_huge_action_ends_its_step_at_once(env: CodeEnv, action: str) -> None:
    env.reset(seed=0, options={"task": 0})
    started = time.monotonic()
    observation, _, terminated, _, _ = env.step(action)
    assert time.monotonic() - started < 2.0
    assert observation.startswith("Error:") and not terminated


def test_a_syntax_error_is_reported_without_temp_paths(env: CodeEnv) -> None:
    env.reset(seed=0, options={"task": 0})
    assert env.instance is not None
    source = next(p for p in env.instance.patch.split("\n") if p.startswith("--- a/"))[len("--- a/") :]
    env.step(render(Command("insert", path=source, line=0, new="def broken(:")))
    first = env.step(render(Command("run_tests", tests=tuple(env.instance.FAIL_TO_PASS))))[0]
    env.reset(seed=0, options={"task": 0})
    env.step(render(Command("insert", path=source, line=0, new="def broken(:")))
    again = env.step(render(Command("run_tests", tests=tuple(env.instance.FAIL_TO_PASS))))[0]
    assert "SyntaxError" in first and "/tmp" not in first and first == again


HOSTILE = """

class TestHostile(unittest.TestCase):
    def test_read_secret(self):
        open(DIR + "/secret.txt").read()

    def test_unlink_victim(self):
        os.unlink(DIR + "/victim.txt")

    def test_rename_victim(self):
        os.rename(DIR + "/victim.txt", DIR + "/moved.txt")

    def test_chmod_victim(self):
        os.chmod(DIR + "/victim.txt", 0o777)

    def test_tmp_token(self):
        open("/tmp/" + TOKEN, "w").write("x")

    def test_symlink_out(self):
        os.symlink(DIR + "/victim.txt", "link.txt")
        open("link.txt", "w").write("through the link")

    def test_ctypes_socket(self):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.socket(2, 1, 0) < 0:
            raise OSError(ctypes.get_errno(), "socket refused")

    def test_kill_parent_group(self):
        os.killpg(os.getpgid(os.getppid()), 9)
"""


def test_hostile_agent_code_sent_as_actions_leaves_the_host_untouched(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("OPENAI_API_KEY=canary-secret\n")
    (canary / "victim.txt").write_text("do not touch\n")
    before = {p.name: (p.stat().st_mode, p.read_text()) for p in canary.iterdir()}
    token = f"reharness-code-pwn-{os.getpid()}"
    env = CodeEnv(split="test")
    env.reset(seed=0, options={"task": 0})
    assert env.workspace is not None
    path = next(p for p in sorted(env.workspace.files()) if p.startswith("tests/test_"))
    lines = len(env.workspace.read(path).splitlines())
    header = f"import os\nDIR = {str(canary)!r}\nTOKEN = {token!r}"
    env.step(render(Command("insert", path=path, line=0, new=header)))
    obs = env.step(render(Command("insert", path=path, line=lines + 3, new=HOSTILE)))[0]
    assert obs.startswith("[Edited"), obs
    obs, _, terminated, truncated, _ = env.step("run_tests")
    assert not (terminated or truncated) and obs.startswith("[Tests]"), obs
    hostile = [line for line in obs.splitlines() if "TestHostile" in line]
    assert len(hostile) == 8 and all(line.startswith("ERROR") for line in hostile), hostile
    assert {p.name: (p.stat().st_mode, p.read_text()) for p in canary.iterdir()} == before
    assert not [n for n in os.listdir("/tmp") if token in n]
    assert env.step("view .")[0].startswith("[Directory")  # the episode (and this process) go on
    env.close()
