"""``reharness run --agent openai:…`` against a real local server that fails the way real ones do.

The server (:class:`FaultyServer`, a :class:`ChatServer` on 127.0.0.1) answers with a counter-playing
function agent, or injects a fault: empty ``choices``, 500s, a 401 whose body echoes the API key it was sent.
The CLI runs as a user would, in a subprocess (with the test's counter env registered first). Checked: empty
choices are retried and the episode still succeeds, with the retries in the trajectory; a run in which every
request failed (500s, 401, a server that is down) prints its summary, says so on stderr and exits 3;
``--retry-errors`` reruns the failed episodes once the server is back; the echoed key is in no file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reharness.core.types import ChatRequest
from reharness.models.server import ChatServer, Fault, ServerThread
from reharness.runtime import FunctionAgent
from reharness.store.run_store import RunStore

TESTS = Path(__file__).resolve().parents[1]
KEY = "local-test-key-PLAIN-0042"  # looks like no known key format: only the configured key says it is one
OTHER_KEY = "sk-live-abcdefghijklmnop1234"  # an unrelated key the server leaks as well
LAUNCH = (
    "import sys; sys.path.insert(0, sys.argv.pop(1))\n"
    "from reharness.envs.registry import EnvSpec, register_env\n"
    "register_env(EnvSpec('counter', 'reharness-test/Counter-v0', 'counter_env:CounterEnv', 'test'))\n"
    "from reharness.cli.main import app\n"
    "app(prog_name='reharness')\n"
)


def play_counter(request: ChatRequest) -> str:
    """The counter's expert, from the messages alone (what a model would see)."""
    text = "\n".join(m.content for m in request.messages)
    target = int(re.findall(r"make the counter equal (\d+)", text)[0])
    value = int(re.findall(r"counter shows (-?\d+)", text)[-1])
    return "Action: " + ("inc" if value < target else "dec" if value > target else "submit")


class FaultyServer(ChatServer):
    """A chat server that can also refuse every request: ``always`` = a status code, or None."""

    always: int | None = None

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        if self.always is None or path != "/v1/chat/completions":
            return await super()._route(method, path, body)
        self.request_times.append(0.0)
        if self.always == 401:  # like a careless proxy: quote the credential back
            sent = self.last_headers.get("authorization", "")
            message = f"Incorrect API key provided: {sent}. Our example key is {OTHER_KEY}."
            return 401, json.dumps({"error": {"message": message}}).encode(), {}
        return self.always, b'{"error": {"message": "overloaded"}}', {"Retry-After": "0"}


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    thread = ServerThread(FaultyServer(FunctionAgent(play_counter), "counter-model"))
    thread.start()
    assert isinstance(thread.server, FaultyServer)
    yield thread.server
    thread.stop()


def reharness(*args: str, retries: int = 2) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "OPENAI_API_KEY": KEY,
        "REHARNESS_OPENAI_MAX_RETRIES": str(retries),
        "REHARNESS_OPENAI_BACKOFF_S": "0.05",
    }
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, str(TESTS), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def run_counter(url: str, out: Path, *extra: str, n: int = 3, retries: int = 2) -> Any:
    proc = reharness(
        "run", "--env", "counter", "--agent", f"openai:counter-model@{url}", "--n", str(n),
        "--concurrency", "1", "--out", str(out), "--json", *extra, retries=retries,
    )  # fmt: skip
    summary = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc, summary


def steps(summary: dict[str, Any]) -> list[dict[str, Any]]:
    lines = (Path(summary["out"]) / "episodes.jsonl").read_text().splitlines()
    return [s for line in lines for s in json.loads(line)["steps"]]


def test_empty_choices_are_retried_and_the_episode_succeeds(server: FaultyServer, tmp_path: Path) -> None:
    server.faults.extend([Fault("empty_choices"), Fault("empty_choices")])
    proc, summary = run_counter(server.base_url, tmp_path, n=2)
    assert proc.returncode == 0, proc.stderr
    assert summary["success_rate"] == 1.0 and summary["policy_errors"] == 0 == summary["env_errors"]
    assert summary["model_requests"] == summary["valid_replies"] > 0
    assert len(server.request_times) == summary["model_requests"] + 2  # two requests were retried
    first = steps(summary)[0]["output"]  # concurrency 1: the first request met both faults
    assert first["attempts"] == 3 and first["error"] is None
    assert len(first["retry_waits_s"]) == 2 and all(w > 0 for w in first["retry_waits_s"])
    assert all("no choices" in e for e in first["retry_errors"])
    assert all(s["output"]["attempts"] == 1 for s in steps(summary)[1:])
    assert "infrastructure error" not in proc.stderr
    shown = reharness("show", summary["out"])
    assert (
        shown.returncode == 0
        and "model retries: 1 of " in shown.stdout
        and "needed 2 retries" in shown.stdout
    )


def test_all_500s_exit_3_with_a_summary_then_retry_errors_recovers(
    server: FaultyServer, tmp_path: Path
) -> None:
    server.always = 500
    proc, summary = run_counter(server.base_url, tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert summary["n"] == 3 and summary["policy_errors"] == 3 and summary["env_errors"] == 0
    assert summary["model_requests"] == 3 and summary["valid_replies"] == 0 and summary["success_rate"] == 0
    assert len(server.request_times) == 9  # 3 episodes x (1 try + 2 retries)
    assert "none of the 3 model requests of this run got a valid reply" in proc.stderr
    assert "HTTP 500" in proc.stderr and "--retry-errors" in proc.stderr and "Traceback" not in proc.stderr
    failed = steps(summary)
    assert [s["output"]["attempts"] for s in failed] == [3, 3, 3]
    assert all(s["flags"] == ["policy_error"] for s in failed)

    server.always = None  # the server is back; a plain rerun keeps the stored errors and says so
    proc, again = run_counter(server.base_url, tmp_path)
    assert proc.returncode == 3 and again["policy_errors"] == 3 and again["retried_errors"] == 0
    assert "3 episodes ended in an infrastructure error" in proc.stderr and "--retry-errors" in proc.stderr
    proc, fixed = run_counter(server.base_url, tmp_path, "--retry-errors")
    assert proc.returncode == 0, proc.stderr
    assert fixed["retried_errors"] == 3 and fixed["policy_errors"] == 0 and fixed["success_rate"] == 1.0
    assert fixed["run_id"] == summary["run_id"] and "retried 3 episodes" in proc.stderr
    # append-only: the rerun records supersede the failed ones, which stay in the file
    jsonl = Path(fixed["out"]) / "episodes.jsonl"
    assert [json.loads(x)["termination"] for x in jsonl.read_text().splitlines()] == ["error"] * 3 + [
        "success"
    ] * 3
    assert [e.success for e in RunStore(fixed["out"]).episodes()] == [True] * 3


def test_a_server_that_is_down_exits_3(tmp_path: Path) -> None:
    proc, summary = run_counter("http://127.0.0.1:9/v1", tmp_path, n=2, retries=1)
    assert proc.returncode == 3 and summary["policy_errors"] == 2 and summary["valid_replies"] == 0
    assert "connection error" in proc.stderr and "none of the 2 model requests" in proc.stderr


def test_a_401_that_echoes_the_key_leaves_it_in_no_file(server: FaultyServer, tmp_path: Path) -> None:
    server.always = 401
    proc, summary = run_counter(server.base_url, tmp_path)
    assert proc.returncode == 3 and summary["policy_errors"] == 3
    assert server.last_headers["authorization"] == f"Bearer {KEY}"  # the key was sent, and echoed
    assert len(server.request_times) == 3  # a 401 is not retried
    stored = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in stored} >= {"episodes.jsonl", "run.json", "index.sqlite"}
    for path in stored:
        data = path.read_bytes()
        assert KEY.encode() not in data and OTHER_KEY.encode() not in data, path
    for text in (proc.stdout, proc.stderr):
        assert KEY not in text and OTHER_KEY not in text
    error = json.loads((Path(summary["out"]) / "episodes.jsonl").read_text().splitlines()[0])["error"]
    assert "HTTP 401" in error and "Bearer [REDACTED]" in error and "example key is [REDACTED]" in error
    assert "OPENAI_API_KEY" in proc.stderr  # the hint survives redaction


def test_some_policy_errors_are_counted_and_the_run_still_exits_0(
    server: FaultyServer, tmp_path: Path
) -> None:
    server.faults.append(Fault("status", 401))  # the first request only: one episode ends in a policy error
    proc, summary = run_counter(server.base_url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert summary["policy_errors"] == 1 and summary["env_errors"] == 0 and summary["n"] == 3
    assert 0 < summary["valid_replies"] == summary["model_requests"] - 1
    assert "1 episode ended in an infrastructure error" in proc.stderr and "--retry-errors" in proc.stderr


def test_improve_against_a_dead_server_stops_after_the_baseline_with_exit_3(tmp_path: Path) -> None:
    proc = reharness(
        "improve", "--env", "household", "--agent", "openai:m@http://127.0.0.1:9/v1", "--engineer",
        "operators", "--batch-size", "2", "--k", "1", "--eval-n", "2", "--out", str(tmp_path), "--json",
        retries=0,
    )  # fmt: skip
    assert proc.returncode == 3 and not proc.stdout and "Traceback" not in proc.stderr
    assert "[no_valid_reply] none of the 2 model requests of the r1 baseline batch" in proc.stderr
    assert "connection error" in proc.stderr and "--retry-errors" in proc.stderr
    assert not (tmp_path / "round-1").exists()  # no packet of server faults went to the engineer
