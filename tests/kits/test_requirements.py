"""A kit whose package or Java runtime is missing fails with one clear error naming the install command."""

from __future__ import annotations

import sys

import pytest

from reharness.core.errors import EnvError
from reharness.envs import make_env


@pytest.mark.parametrize(
    ("env_name", "module"), [("twx-coin", "textworld_express"), ("scienceworld", "scienceworld")]
)
def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch, env_name: str, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError, as when not installed
    extra = "twx" if env_name.startswith("twx") else "scienceworld"
    with pytest.raises(EnvError) as caught:
        make_env(env_name, split="test")
    assert f"pip install 'reharness[{extra}]'" in str(caught.value)
    assert module in str(caught.value)


@pytest.mark.parametrize("env_name", ["twx-twc", "scienceworld"])
def test_missing_java_names_the_runtime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, env_name: str
) -> None:
    pytest.importorskip("textworld_express" if env_name.startswith("twx") else "scienceworld")
    monkeypatch.setenv("PATH", str(tmp_path))  # no `java` anywhere on PATH
    with pytest.raises(EnvError) as caught:
        make_env(env_name, split="test")
    message = str(caught.value)
    assert "Java runtime" in message and "apt-get install default-jre-headless" in message


def test_missing_bfcl_names_the_no_deps_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)
    with pytest.raises(EnvError) as caught:
        make_env("bfcl", split="test")
    assert "pip install --no-deps bfcl-eval mpmath" in str(caught.value)


def test_unknown_kit_option_values_are_clear_errors() -> None:
    pytest.importorskip("bfcl_eval")
    with pytest.raises(EnvError, match="unknown category"):
        make_env("bfcl", split="test", category="nonsense")
