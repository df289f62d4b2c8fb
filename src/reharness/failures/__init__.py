"""Failure analysis (layer ``failures``): failure codes, deterministic detectors, runtime signals, packets.

- :mod:`.codes`: the stable taxonomy (:class:`FailureCode`); its values are a contract shared by trajectories,
  packets, profiles and error messages.
- :mod:`.evidence`: per-step facts read from a recorded trajectory, shared by detectors and runtime signals.
- :mod:`.detectors`: :func:`detect` / :func:`findings` (codes with step evidence) and :func:`failure_codes`,
  the annotator the executor stores in ``EpisodeRecord.failure_codes``.
- :mod:`.runtime_signals`: :func:`signals`, per-episode runtime counters derived from the trajectory.
- :mod:`.packet_model`: the failure packet's data model (pydantic), shared by extraction and rendering.
- :mod:`.packets`: :func:`extract_packet`: a deterministic digest of a batch's failures for an engineer.
- :mod:`.render`: :func:`render_packet`: the packet's text as the harness engineer reads it.
- :mod:`.text`: text handling for packets: head + tail trimming and masking of task-specific values.

Environment-specific detectors and signals come from the kits (``EnvKit``), asked through the kit registry.
Sits above ``runtime``/``store``/``envs``/``patches`` and below ``engineer``/``cli``. Importing this package
loads only the taxonomy; the rest loads on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from reharness.failures.codes import ALL_CODES, DESCRIPTIONS, FailureCode, parse_code

if TYPE_CHECKING:
    from reharness.failures.detectors import (
        NO_PROGRESS_STEPS,
        REPEAT_RUN,
        Finding,
        detect,
        failure_codes,
        findings,
    )
    from reharness.failures.packets import (
        STRATEGIES,
        FailurePacket,
        PacketTrace,
        extract_packet,
        is_failure,
    )
    from reharness.failures.render import render_packet
    from reharness.failures.runtime_signals import signals

_LAZY = {
    "NO_PROGRESS_STEPS": "detectors",
    "REPEAT_RUN": "detectors",
    "Finding": "detectors",
    "detect": "detectors",
    "failure_codes": "detectors",
    "findings": "detectors",
    "STRATEGIES": "packets",
    "FailurePacket": "packets",
    "PacketTrace": "packets",
    "extract_packet": "packets",
    "is_failure": "packets",
    "render_packet": "render",
    "signals": "runtime_signals",
}

__all__ = [
    "ALL_CODES",
    "DESCRIPTIONS",
    "NO_PROGRESS_STEPS",
    "REPEAT_RUN",
    "STRATEGIES",
    "FailureCode",
    "FailurePacket",
    "Finding",
    "PacketTrace",
    "detect",
    "extract_packet",
    "failure_codes",
    "findings",
    "is_failure",
    "parse_code",
    "render_packet",
    "signals",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reharness.failures' has no attribute {name!r}")
    return getattr(import_module(f"reharness.failures.{module}"), name)
