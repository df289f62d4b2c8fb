"""The tiny-agent registry: where agents are found, and training a missing one on first use through the
trainer declared in the entry-point group ``reharness.tiny_trainers`` (the training layer's, found without
an upward import).

The first-use tests install small real distributions (a ``.dist-info`` beside a module) on ``sys.path``:
one whose trainer writes a model directory, one whose trainer does not import, and one named ``reharness``
that declares no trainer (it shadows the installed metadata, as a source tree without an install would).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from pathlib import Path

import pytest

from reharness.core.errors import ConfigError
from reharness.models.tiny.config import Recipe, recipe_for, recipes
from reharness.models.tiny.registry import TRAINER_GROUP, TRAINER_NAME, find_trainer, resolve_tiny
from reharness.runtime import Harness
from reharness.runtime.harness import base_harness_config

ROOT = Path(__file__).resolve().parents[2]
TRAINER_TARGET = "reharness.training.tiny.train:train_agent"

FAKE_TRAINER = """
import json
from pathlib import Path


def train(recipe, out, seed=0, threads=None, *, command):
    out = Path(out)
    out.mkdir(parents=True)
    (out / "config.json").write_text("{}")
    (out / "tokenizer.json").write_text("{}")
    call = {"recipe": recipe.model_dump(mode="json"), "seed": seed, "threads": threads, "command": command}
    (out / "call.json").write_text(json.dumps(call))
"""


def _install(root: Path, name: str, entry_points: str, modules: dict[str, str] | None = None) -> Path:
    """A minimal installed distribution ``name`` under ``root``: metadata, entry points, top-level modules."""
    info = root / f"{name.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(source)
    return root


@pytest.fixture
def no_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package without shipped weights and an empty cache: every agent must come from training."""
    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("reharness.models.tiny.registry.WEIGHTS_DIR", tmp_path / "no-shipped-weights")
    return tmp_path / "cache" / "tiny"


def test_reharness_declares_its_trainer_in_pyproject() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["entry-points"][TRAINER_GROUP] == {TRAINER_NAME: TRAINER_TARGET}


def test_the_installed_reharness_finds_the_training_layers_trainer() -> None:
    from reharness.training.tiny.train import train_agent

    assert find_trainer() is train_agent, (
        f"the installed reharness declares no {TRAINER_GROUP!r} entry point: its metadata predates "
        "pyproject.toml's declaration; reinstall it (`pip install --no-deps -e .`)"
    )


def test_a_missing_agent_is_trained_on_first_use_by_the_declared_trainer(
    tmp_path: Path, no_weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = f"[{TRAINER_GROUP}]\n{TRAINER_NAME} = fake_tiny_trainer:train\n"
    site = _install(tmp_path / "site", "fake-tiny-trainer", entry, {"fake_tiny_trainer": FAKE_TRAINER})
    monkeypatch.syspath_prepend(str(site))
    messages: list[str] = []
    path = resolve_tiny("shop-M", train=True, notify=messages.append, threads=1)
    assert path == no_weights / "shop-M"
    call = json.loads((path / "call.json").read_text())
    assert Recipe.model_validate(call["recipe"]) == recipe_for("shop", "M")
    assert call["seed"] == 0 and call["threads"] == 1
    assert call["command"] == "reharness agent train --env shop --size M --seed 0"
    assert len(messages) == 1 and "not trained yet; training it now into" in messages[0]
    # trained once: the next resolution finds it in the cache without training again
    (path / "call.json").unlink()
    assert resolve_tiny("shop-M", train=True, notify=messages.append) == path and len(messages) == 1
    sys.modules.pop("fake_tiny_trainer", None)


def test_without_a_declared_trainer_the_error_names_the_training_command(
    tmp_path: Path, no_weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(_install(tmp_path / "site", "reharness", "")))
    assert find_trainer() is None
    with pytest.raises(ConfigError, match="no tiny-agent trainer is installed") as err:
        resolve_tiny("shop-M", train=True, notify=lambda m: None)
    assert "reharness agent train --env shop --size M --seed 0" in (err.value.hint or "")
    assert "pip install -e ." in (err.value.hint or "")
    assert not (no_weights / "shop-M").exists()


def test_a_trainer_that_fails_to_import_is_named(
    tmp_path: Path, no_weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = f"[{TRAINER_GROUP}]\n{TRAINER_NAME} = no_such_trainer_module:train\n"
    monkeypatch.syspath_prepend(str(_install(tmp_path / "site", "broken-trainer", entry)))
    with pytest.raises(ConfigError, match="'no_such_trainer_module:train'.*failed to load"):
        resolve_tiny("shop-M", train=True, notify=lambda m: None)


def test_registry_cache_override_and_no_train_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reharness.core.errors import ConfigError, UnknownNameError
    from reharness.models.tiny.registry import cache_dir, find_tiny, resolve_tiny

    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path))
    # a package without shipped weights: every agent comes from the cache or training
    monkeypatch.setattr("reharness.models.tiny.registry.WEIGHTS_DIR", tmp_path / "no-shipped-weights")
    assert cache_dir("shop-M") == tmp_path / "tiny" / "shop-M"
    info = find_tiny("shop-M")
    assert info.path is None and not info.shipped
    with pytest.raises(ConfigError, match="not trained yet") as err:
        resolve_tiny("shop-M", train=False)
    assert "reharness agent train --env shop --size M --seed 0" in (err.value.hint or "")
    with pytest.raises(UnknownNameError):
        find_tiny("kitchen-S")


def test_run_no_train_fails_with_the_training_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from reharness.cli.main import app

    monkeypatch.setenv("REHARNESS_CACHE", str(tmp_path))
    monkeypatch.setattr("reharness.models.tiny.registry.WEIGHTS_DIR", tmp_path / "no-shipped-weights")
    args = [
        "run",
        "--env",
        "shop",
        "--agent",
        "tiny:shop-M",
        "--n",
        "1",
        "--no-train",
        "--out",
        str(tmp_path),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "reharness agent train --env shop --size M" in result.output
    assert not (tmp_path / "tiny" / "shop-M").exists()


@pytest.mark.parametrize(("env", "size"), sorted(recipes()))  # every recipe ships its weights
def test_shipped_agent_loads_and_acts_through_the_runtime(env: str, size: str, tmp_path: Path) -> None:
    """A shipped tiny agent is a complete HF directory with provenance and runs real episodes."""
    from reharness.models.registry import resolve_tiny
    from reharness.models.tiny.registry import find_tiny
    from reharness.runtime.agent_specs import make_agent
    from reharness.runtime.executor import RunSpec, run_batch

    info = find_tiny(f"{env}-{size}")
    assert info.shipped and info.path is not None
    assert resolve_tiny(f"{env}-{size}", train=False) == info.path
    provenance = info.provenance or {}
    assert provenance["command"].startswith(f"reharness agent train --env {env} --size {size} --seed 0")
    # fields added later keep their old meaning by default: the shipped recipe still reads as the current one
    assert Recipe.model_validate(provenance["recipe"]) == recipe_for(env, size)
    agent = make_agent(f"tiny:{env}-{size}", train_missing=False)
    spec = RunSpec(env=env, agent=f"tiny:{env}-{size}", split="test", n=4, seed=0, concurrency=4)
    short = base_harness_config(env).model_copy(update={"step_limit": 3})  # keeps the test fast
    result = asyncio.run(run_batch(spec, agent, Harness(short), tmp_path))
    assert len(result.episodes) == 4
    assert all(
        r.steps and r.steps[0].output and r.steps[0].output.completion_token_ids for r in result.episodes
    )
