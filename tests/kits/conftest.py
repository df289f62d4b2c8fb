"""Shared set-up of the real-benchmark kit tests: register the kit environments, skip what cannot run.

A kit whose package or Java runtime is missing is skipped with the reason printed (``.ci/run`` installs
them all); the missing-dependency errors themselves are tested in ``test_requirements.py``.
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from reharness.kits.registration import register_kit_envs

register_kit_envs()


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def need(*modules: str, java: bool = False) -> None:
    """Skip the calling test (printing why) unless the modules and, if asked, ``java`` are present."""
    missing = [m for m in modules if not _has(m)]
    if java and shutil.which("java") is None:
        missing.append("java (apt-get install default-jre-headless)")
    if missing:
        reason = f"needs {', '.join(missing)}; .ci/run installs them"
        print(f"SKIPPED: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def need_twx() -> None:
    need("textworld_express", java=True)


@pytest.fixture(scope="module")
def need_scienceworld() -> None:
    need("scienceworld", java=True)


@pytest.fixture(scope="module")
def need_bfcl() -> None:
    need("bfcl_eval", "mpmath")
