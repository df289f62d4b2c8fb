"""Clear errors for a kit's missing optional package or Java runtime.

A kit's environment calls :func:`require_module` and :func:`require_java` when it is built, so a user who
lacks a dependency gets one message naming the exact command that installs it, never an ``ImportError`` or
a py4j traceback from deep inside a JVM launcher.
"""

from __future__ import annotations

import importlib
import shutil
from types import ModuleType

from reharness.core.errors import EnvError

JAVA_INSTALL = "apt-get install default-jre-headless"


def require_module(module: str, extra: str, env_name: str, extra_pip: str = "") -> ModuleType:
    """Import ``module`` or raise an :class:`EnvError` naming ``pip install 'reharness[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        command = f"pip install 'reharness[{extra}]'"
        if extra_pip:
            command += f" (or: {extra_pip})"
        raise EnvError(
            f"{env_name} needs the Python package {module!r}, which is not installed ({exc})",
            hint=f"run: {command}",
        ) from None


def require_java(env_name: str) -> str:
    """Path of the ``java`` executable, or an :class:`EnvError` saying how to install a Java runtime."""
    java = shutil.which("java")
    if java is None:
        raise EnvError(
            f"{env_name} runs its benchmark's JAR and needs a Java runtime, but no `java` is on PATH",
            hint=f"install one: {JAVA_INSTALL} (Debian/Ubuntu; any Java 11+ runtime on PATH works)",
        )
    return java
