"""The ScienceWorld JVM, started by the kit itself so that its runs do not depend on what it ran before.

ScienceWorld iterates hash sets of simulation objects keyed by Java identity hash codes. HotSpot's default
identity hash is a thread-local pseudo-random sequence, so the order — which object a random event picks, how
identical objects are listed — depends on everything the JVM allocated before: the same task played after
different episodes gave different trajectories (``mendelian-genetics-known-plant`` variation 103: three
histories, three trajectories, and once a gold path that failed). The kit launches the JAR with
``-XX:hashCode=2`` (every identity hash is 1: hash sets keep insertion order), which makes a task's trajectory
the same whatever ran before and in any process; the JAR itself reseeds its random generator on every load.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from reharness.core.errors import EnvError

#: JVM options of the kit's ScienceWorld JVM (see the module docstring).
DETERMINISTIC_JAVA_OPTS = ("-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2")


class ScienceWorldJvm:
    """One ScienceWorld JAR in its own JVM; ``server`` is the JAR's ``PythonInterface``."""

    def __init__(self, module: Any) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        constants = importlib.import_module(f"{module.__name__}.constants")
        try:
            port, proc = launch_gateway(
                classpath=constants.JAR_PATH,
                die_on_exit=True,
                cwd=constants.BASEPATH,
                javaopts=list(DETERMINISTIC_JAVA_OPTS),
                return_proc=True,
            )
            self._gateway = JavaGateway(
                gateway_parameters=GatewayParameters(auto_field=True, port=port), java_process=proc
            )
            self.server = self._gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
        except Exception as exc:  # py4j: the JVM did not start or did not answer
            raise EnvError(
                f"scienceworld: the JVM failed to start: {type(exc).__name__}: {exc}",
                hint="check `java -version` works (apt-get install default-jre-headless)",
            ) from None

    @property
    def pid(self) -> int:
        return int(self._gateway.java_process.pid)

    def close(self) -> None:
        gateway, self._gateway = getattr(self, "_gateway", None), None
        if gateway is None:
            return
        with contextlib.suppress(Exception):
            gateway.shutdown()
        process = gateway.java_process
        if process is not None and process.poll() is None:  # py4j issue 320: the JVM exits on a newline
            with contextlib.suppress(Exception):
                process.stdin.write(b"\n")
                process.stdin.flush()
