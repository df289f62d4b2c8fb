"""The ``apps`` env (AppWorld-like): tasks, APIs, grading by database diff, the confined interpreter.

Everything runs for real: generated worlds in SQLite, agent code in the confined worker process, the
ground-truth programs through the same interpreter an agent uses.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app as cli_app
from reharness.core.errors import EnvError
from reharness.core.sandbox import confine
from reharness.core.sandbox.interpreter import ConfinedInterpreter
from reharness.envs import check_env, make_env
from reharness.failures import failure_codes
from reharness.kits.apps import AppsEnv, run_metrics
from reharness.kits.apps.grading import normalise_answer
from reharness.kits.apps.protocol import fence
from reharness.kits.apps.scenarios import TEMPLATES
from reharness.kits.apps.world import N_PEOPLE, World
from reharness.runtime import CallableOverlay, EpisodeRunner, FunctionAgent, Harness, SolverAgent
from reharness.runtime.harness import load_harness_config

LOGIN = """
profile = apis.supervisor.show_profile()
pw = {a["account_name"]: a["password"] for a in apis.supervisor.show_account_passwords()}
def token(app):
    return getattr(apis, app).login(username=profile["email"], password=pw[app])["access_token"]
"""


@pytest.fixture(scope="module")
def env() -> AppsEnv:
    e = make_env("apps", split="test", step_timeout_s=2.0)
    yield e
    e.close()


def first_task(env: AppsEnv, template: str, split: str = "test") -> int:
    return next(i for i in range(300) if env.generate_task(split, i).task_type == template)


def start(env: AppsEnv, task: int | str = 0) -> str:
    obs, _ = env.reset(seed=0, options={"task": task})
    return obs


def solve(env: AppsEnv) -> tuple[str, dict[str, Any], int]:
    """Play the expert until the episode ends: ``(last observation, last info, steps)``."""
    steps, done = 0, False
    while not done:
        obs, _, terminated, truncated, info = env.step(env.expert_action())
        steps, done = steps + 1, terminated or truncated
    return obs, info, steps


def run(env: AppsEnv, code: str) -> tuple[str, dict[str, Any], bool]:
    obs, _, terminated, _, info = env.step(fence(code))
    return obs, info, terminated


# --- env contract
def test_check_env_and_registration() -> None:
    e = make_env("reharness/Apps-v0", split="valid")
    try:
        assert check_env(e) == []
        assert e.name == "apps" and e.tools()[0]["function"]["name"] == "execute"
    finally:
        e.close()


def test_world_has_a_hundred_people_six_apps_and_the_supervisor() -> None:
    world = World({"seed": 7})
    assert len(world.people) == N_PEOPLE == 100
    assert len({p["email"] for p in world.people}) == 100
    apps = {r["app"] for r in world.rows("SELECT DISTINCT app FROM accounts")}
    assert len(apps) >= 6
    assert world.rows("SELECT count(*) AS n FROM contacts WHERE owner_id = 1")[0]["n"] == 30


def test_splits_are_disjoint_and_scenarios_have_three_variants(env: AppsEnv) -> None:
    scenarios = {
        split: {env.generate_task(split, i).state["scenario_id"] for i in range(45)}
        for split in ("train", "valid", "test")
    }
    assert not scenarios["train"] & scenarios["valid"]
    assert not scenarios["train"] & scenarios["test"] and not scenarios["valid"] & scenarios["test"]
    tasks = [env.generate_task("test", i) for i in range(6)]
    assert len({t.state["scenario_id"] for t in tasks[:3]}) == 1 and tasks[0].task_type == tasks[2].task_type
    assert len({t.instruction for t in tasks[:3]}) == 3  # three different variants
    assert env.generate_task("test", 4) == tasks[4]  # deterministic
    assert {t.task_type for i in range(90) for t in [env.generate_task("test", i)]} == set(TEMPLATES)
    spans = {len(env.generate_task("test", first_task(env, name)).state["apps"]) for name in TEMPLATES}
    assert spans == {1, 2, 3}


# --- solver and grading
@pytest.mark.parametrize(("split", "count"), [("test", 30), ("valid", 9), ("train", 9)])
def test_the_solver_solves_every_sampled_task(split: str, count: int) -> None:
    e = make_env("apps", split=split)
    try:
        for i in range(count):
            e.reset(seed=i, options={"task": i})
            obs, info, steps = solve(e)
            assert info["success"] and steps == 2, (i, e.task.task_type, obs[-600:])  # helpers, then the task
            assert info["tgc"] is True and all(t["passed"] for t in info["tests"])
    finally:
        e.close()


def test_a_wrong_answer_fails(env: AppsEnv) -> None:
    start(env, first_task(env, "count_events"))
    obs, info, done = run(env, "apis.supervisor.complete_task(answer='999')")
    assert done and not info["success"] and "FAILED answer" in obs
    assert [t["name"] for t in info["tests"] if not t["passed"]] == ["answer"]


def test_a_numeric_answer_is_accepted(env: AppsEnv) -> None:
    start(env, first_task(env, "count_events"))
    answer = int(env.task.gold["answer"])
    obs, info, done = run(env, f"apis.supervisor.complete_task(answer={answer})")
    assert done and info["success"], obs


def test_collateral_damage_fails_even_when_the_task_is_done(env: AppsEnv) -> None:
    start(env, first_task(env, "email_count"))
    code = env.task.gold["code"].replace(
        "apis.supervisor.complete_task(",
        'n = apis.notes.show_notes(access_token=token("notes"))[0]\n'
        'apis.notes.delete_note(access_token=token("notes"), note_id=n["note_id"])\n'
        "apis.supervisor.complete_task(",
    )
    obs, info, done = run(env, code)
    assert done and not info["success"]
    assert "FAILED no_collateral_damage" in obs and "notes: delete" in obs
    assert {t["name"]: t["passed"] for t in info["tests"]}["answer"] is True


def test_missing_changes_and_status_fail_fail(env: AppsEnv) -> None:
    start(env, first_task(env, "pay_relationship"))
    obs, info, _ = run(env, "apis.supervisor.complete_task()")
    assert not info["success"] and "expected change not found" in obs
    start(env, first_task(env, "pay_relationship"))
    _, info, _ = run(env, "apis.supervisor.complete_task(status='fail')")
    assert not info["success"] and not next(t for t in info["tests"] if t["name"] == "completed")["passed"]


def test_answers_are_normalised() -> None:
    assert normalise_answer(" 12 ") == normalise_answer(12) == normalise_answer("12.0") == "12.00"
    assert normalise_answer("'$7.5'") == "7.50" and normalise_answer("Ava  Chen") == "ava chen"


# --- the APIs
def test_auth_errors_are_401(env: AppsEnv) -> None:
    start(env)
    obs, info, _ = run(env, "apis.notes.show_notes()")
    assert "ApiError: Response status code is 401" in obs and "access_token" in obs
    assert info["error_kind"] == "auth_error"
    obs, _, _ = run(env, "apis.notes.login(username='nobody@example.com', password='x')")
    assert "401" in obs and "Invalid credentials" in obs
    obs, _, _ = run(env, LOGIN + "t = token('email')\napis.notes.show_notes(access_token=t)")
    assert "401" in obs and "for the email app" in obs
    obs, _, _ = run(env, "apis.notes.show_notes(access_token='forged')")
    assert "401" in obs and "Invalid access token" in obs
    assert env.runtime_state()["logged_in"] == ["email"]


def test_misuse_is_404_or_422_with_a_clear_message(env: AppsEnv) -> None:
    start(env)
    run(env, LOGIN + "t = token('contacts')")
    obs, info, _ = run(env, "apis.contacts.show_contact(access_token=t)")
    assert "404" in obs and "show_contacts" in obs and info["error_kind"] == "not_found"
    assert "404" in run(env, "apis.contatcs.show_contacts()")[0]
    obs, info, _ = run(env, "apis.contacts.show_contacts(access_token=t, page_limit=21)")
    assert (
        "422" in obs and "page_limit" in obs and "<= 20" in obs and info["error_kind"] == "validation_error"
    )
    obs, _, _ = run(env, "apis.contacts.show_contacts(access_token=t, color='red')")
    assert "422" in obs and "unexpected parameter" in obs
    obs, _, _ = run(env, "apis.contacts.show_contacts(access_token=t, page_index='1')")
    assert "422" in obs and "must be of type int" in obs
    assert "404" in run(env, LOGIN + "apis.notes.show_note(access_token=token('notes'), note_id=99999)")[0]
    assert "keyword arguments only" in run(env, "apis.supervisor.show_profile(1)")[0]


def test_pagination_defaults_to_five_and_pages_cover_everything(env: AppsEnv) -> None:
    start(env)
    code = LOGIN + (
        "t = token('contacts')\n"
        "first = apis.contacts.show_contacts(access_token=t)\n"
        "pages = [apis.contacts.show_contacts(access_token=t, page_index=i, page_limit=20)\n"
        "         for i in range(3)]\n"
        "print(len(first), [len(p) for p in pages], len({c['contact_id'] for p in pages for c in p}))"
    )
    obs, _, _ = run(env, code)
    assert obs.strip() == "5 [20, 10, 0] 30"


def test_api_docs_have_three_levels(env: AppsEnv) -> None:
    start(env)
    obs, _, _ = run(env, "print(len(apis.api_docs.show_app_descriptions()))")
    assert int(obs) >= 8
    obs, _, _ = run(
        env, "print([a['name'] for a in apis.api_docs.show_api_descriptions(app_name='payments')])"
    )
    assert "send_money" in obs and "login" in obs
    obs, _, _ = run(
        env,
        "import json\nprint(json.dumps(apis.api_docs.show_api_doc(app_name='email', api_name='show_inbox')))",
    )
    doc = json.loads(obs)
    params = {p["name"]: p for p in doc["parameters"]}
    assert params["page_limit"]["default"] == 5 and "value <= 20" in params["page_limit"]["constraints"]
    assert params["access_token"]["required"] is True


def test_the_namespace_persists_and_a_bare_expression_is_echoed(env: AppsEnv) -> None:
    start(env)
    run(env, "x = 41")
    assert run(env, "x + 1")[0].strip() == "42"
    obs, info, done = run(env, "print(undefined_name)")
    assert "NameError" in obs and info["error_kind"] == "code_error" and not done


def test_format_errors_and_the_tool_protocol(env: AppsEnv) -> None:
    start(env)
    obs, _, done, _, info = env.step("I will look at the notes first.")
    assert info["invalid_action"] and "```python" in obs and not done
    action = env.action_from_tool_call("execute", {"code": "print(1 + 1)"})
    assert env.tool_call_from_action(action) == ("execute", {"code": "print(1 + 1)"})
    assert env.step(action)[0].strip() == "2"
    with pytest.raises(ValueError, match="only tool is execute"):
        env.action_from_tool_call("run", {"code": "1"})
    assert env.step("print('bare code works too')")[0].strip() == "bare code works too"


def test_output_is_capped(env: AppsEnv) -> None:
    start(env)
    obs, _, _ = run(env, "print('x' * 100000)")
    assert len(obs) <= 4100 and "truncated" in obs


# --- confinement
ESCAPE = """
g = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__
imp = g['sys'].modules['builtins'].__import__
os = imp('os')
def attempt(name, fn):
    try:
        print(name, 'ok', repr(fn())[:40])
    except BaseException as exc:
        print(name, type(exc).__name__)
"""


def outcomes(obs: str) -> dict[str, str]:
    return {line.split()[0]: line.split()[1] for line in obs.splitlines() if len(line.split()) >= 2}


@pytest.mark.skipif(
    confine.landlock_abi() < 6 or confine.load_libseccomp() is None,
    reason="asserts the Landlock (ABI >= 6) and seccomp layers, as the patch sandbox's escape tests do",
)
def test_agent_code_cannot_touch_host_files_network_or_processes(env: AppsEnv, tmp_path: Any) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    start(env)
    assert "not allowed" in run(env, "import os")[0]  # the front door is shut ...
    code = ESCAPE + (  # ... and behind the back door the kernel says no
        f"attempt('secret', lambda: imp('io').open({str(secret)!r}).read())\n"
        "attempt('passwd', lambda: imp('io').open('/etc/passwd').read())\n"
        f"attempt('unlink', lambda: os.unlink({str(victim)!r}))\n"
        f"attempt('write', lambda: os.open({str(tmp_path / 'new')!r}, os.O_WRONLY | os.O_CREAT))\n"
        "attempt('socket', lambda: imp('socket').socket())\n"
        "attempt('fork', lambda: os.fork())\n"
        f"attempt('system', lambda: os.system('touch {tmp_path}/pwned'))\n"
        "attempt('kill', lambda: os.kill(os.getppid(), 0))\n"
        "res = imp('resource')\n"
        "attempt('setrlimit', lambda: res.setrlimit(res.RLIMIT_AS, (-1, -1)))\n"
    )
    obs, _, done = run(env, code)
    got = outcomes(obs)
    assert {k: got[k] for k in ("secret", "passwd", "unlink", "write")} == dict.fromkeys(
        ("secret", "passwd", "unlink", "write"), "PermissionError"
    ), obs
    assert got["socket"] == got["fork"] == got["kill"] == "PermissionError", obs
    assert got["setrlimit"] in ("PermissionError", "ValueError"), obs  # limits cannot be raised
    assert got["system"] == "ok"  # returns a failure status: execve is denied
    assert (
        victim.read_text() == "keep" and not (tmp_path / "new").exists() and not (tmp_path / "pwned").exists()
    )
    assert not done and run(env, "print('still here')")[0].strip() == "still here"


def test_a_forged_frame_restarts_the_interpreter_and_the_episode_goes_on(env: AppsEnv) -> None:
    start(env)
    run(env, "kept = 1")
    forge = (  # reach the worker's own channel through closures and write frames the host did not ask for
        "def cell(fn, name):\n"
        "    cells = [c.cell_contents for c in fn.__closure__]\n"
        "    return [c for c in cells if getattr(c, '__name__', '') == name][0]\n"
        "send = cell(cell(type(apis.notes.login).__call__, 'call'), 'send')\n"
        'send(\'{"op": "call", "app": 1}\')\n'
    )
    obs, info, done = run(env, forge)
    assert "broke the protocol" in obs and not done and info["error_kind"] == "code_error"
    assert "NameError" in run(env, "kept")[0]  # a fresh interpreter
    assert (
        run(env, "print(apis.supervisor.show_profile()['email'].endswith('@example.com'))")[0].strip()
        == "True"
    )


def test_an_infinite_loop_times_out_and_the_episode_continues(env: AppsEnv) -> None:
    start(env, first_task(env, "count_events"))
    run(env, "y = 1")
    obs, info, done = run(env, "while True:\n    pass")
    assert "TimeoutError" in obs and "time limit" in obs and info["error_kind"] == "timeout" and not done
    assert "NameError" in run(env, "print(y)")[0]  # a fresh interpreter ...
    assert env.runtime_state()["timeouts"] == 1
    obs, info, steps = solve(env)  # ... the expert defines its helpers again, and the world is intact
    assert info["success"] and steps == 2, obs


def test_memory_exhaustion_is_an_error_not_a_crash(env: AppsEnv) -> None:
    start(env)
    obs, _, done = run(env, "x = ' ' * (4 << 30)")
    assert "MemoryError" in obs and not done
    assert run(env, "print('after')")[0].strip() == "after"


def test_the_interpreter_reports_its_confinement() -> None:
    interp = ConfinedInterpreter(lambda app, api, args: {"ok": True, "result": None})
    try:
        assert interp.execute("print(1)").output == "1\n"
        caps = interp.isolation_report()
        assert caps["rlimits"]["fsize"] == 0 and caps["no_new_privs"] is True
    finally:
        interp.close()


# --- runtime and system
def episode(env: AppsEnv, agent: Any, task: int, harness: Harness | None = None) -> Any:
    async def go() -> Any:
        return await EpisodeRunner(env, agent, harness or Harness.base("apps")).run(env.get_task(task), 3)

    return asyncio.run(go())


def scripted(codes: list[str]) -> FunctionAgent:
    """Replies with ``codes[i]`` at decision ``i`` (the last one repeated)."""

    def reply(request: Any) -> str:
        i = sum(m.role == "assistant" for m in request.messages)
        return fence(codes[min(i, len(codes) - 1)])

    return FunctionAgent(reply)


def test_solver_episodes_are_deterministic_under_both_harnesses(env: AppsEnv) -> None:
    fc = Harness(load_harness_config("src/reharness/kits/apps/harness-fc.yaml", "apps"))
    for harness in (Harness.base("apps"), fc):
        a, b = episode(env, SolverAgent(), 5, harness), episode(env, SolverAgent(), 5, harness)
        assert a.success and a.digest_payload() == b.digest_payload()


def test_failure_codes_of_apps_episodes(env: AppsEnv) -> None:
    steps = [
        "apis.notes.show_notes()",
        "apis.notes.show_notez()",
        "print(undefined)",
        "apis.supervisor.complete_task(answer='no')",
    ]
    record = episode(env, scripted(steps), first_task(env, "email_count"))
    assert set(failure_codes(record)) >= {"auth_error", "api_error", "code_error", "wrong_answer"}
    short = Harness(Harness.base("apps").config.model_copy(update={"step_limit": 3}))
    stuck = episode(env, scripted(["print(1)"]), 0, short)
    assert "step_limit" in failure_codes(stuck)


def test_hooks_see_the_apps_ctx_fields(env: AppsEnv) -> None:
    seen: dict[str, Any] = {}

    def before(ctx: Any, nb: Any) -> None:
        seen.setdefault("action", dict(ctx["action"]))

    def after(ctx: Any, nb: Any) -> dict[str, str] | None:
        seen["state"] = {k: ctx[k] for k in ("last_error_kind", "api_errors", "logged_in", "api_calls")}
        seen["task"] = dict(ctx["task"])
        if ctx["last_error_kind"] == "auth_error":
            return {"type": "inject_hint", "message": "LOG IN FIRST"}
        return None

    short = Harness(Harness.base("apps").config.model_copy(update={"step_limit": 3}))
    harness = short.with_overlays(CallableOverlay({"before_action": before, "after_feedback": after}))
    record = episode(
        env, scripted(["apis.notes.show_notes()", LOGIN + "t = token('notes')", "print(t[:4])"]), 0, harness
    )
    assert list(seen["action"]["api_calls"]) == ["notes.show_notes"] and seen["action"]["completes"] is False
    assert "LOG IN FIRST" in record.steps[0].observation or any(
        "LOG IN FIRST" in str(e) for e in record.steps[0].effects
    )
    assert list(seen["state"]["logged_in"]) == ["notes"] and dict(seen["state"]["api_errors"]) == {"401": 1}
    assert set(seen["task"]) >= {"apps", "scenario_id", "asks_question", "instruction"}


def test_bad_env_options_are_clear_errors() -> None:
    with pytest.raises(EnvError, match="step_timeout_s must be positive"):
        make_env("apps", step_timeout_s=0)
    with pytest.raises(EnvError, match="unknown split"):
        make_env("apps", split="dev")
    e = make_env("apps")
    with pytest.raises(EnvError, match="out of range"):
        e.generate_task("test", -1)
    e.close()


def test_run_metrics_count_tasks_and_whole_scenarios() -> None:
    results = [
        ("apps/test/000000", True),
        ("apps/test/000001", True),
        ("apps/test/000002", True),
        ("apps/test/000003", True),
        ("apps/test/000004", False),
    ]
    assert run_metrics(results) == {"tgc": 80.0, "sgc": 50.0, "scenarios": 2, "complete_scenarios": 1}
    assert run_metrics([]) == {"tgc": 0.0, "sgc": 0.0, "scenarios": 0, "complete_scenarios": 0}


def test_cli_run_with_the_solver(tmp_path: Any) -> None:
    out = CliRunner().invoke(
        cli_app, ["run", "--env", "apps", "--agent", "solver", "--n", "20", "--out", str(tmp_path), "--json"]
    )
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["success_rate"] == 1.0 and summary["tgc"] == 100.0 and summary["sgc"] == 100.0


def test_random_agent_rarely_succeeds(env: AppsEnv) -> None:
    from reharness.runtime import RandomAgent

    wins = Counter(episode(env, RandomAgent(), i).success for i in range(20))
    assert wins[True] <= 2
