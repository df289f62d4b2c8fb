"""Agent specs → agents: :func:`make_agent` is what ``reharness run --agent SPEC`` (and every other command
taking ``--agent``) resolves with.

A spec is a scripted agent's name (``solver``, ``random``, ``gold``: :data:`~reharness.runtime.agents.
SCRIPTED_AGENTS`) or a model backend spec (``openai:MODEL@BASE_URL``, ``hf:PATH``, ``tiny:NAME``,
``pretrained:NAME``: built by :func:`reharness.models.registry.make_backend`). It lives in the runtime because
the scripted agents do, and the backends sit one layer below; resolving ``tiny:NAME`` may train a missing
built-in agent on first use (:func:`reharness.models.tiny.registry.resolve_tiny` finds the trainer through
an entry point, so nothing here imports the training layer). Heavy libraries load only when a backend of
that kind is built, so importing this module is cheap.
"""

from __future__ import annotations

from typing import Any

from reharness.core.agent import Agent
from reharness.core.errors import UnknownNameError, did_you_mean
from reharness.models.registry import BACKENDS, check_spec, make_backend
from reharness.runtime.agents import SCRIPTED_AGENTS


def make_agent(spec: str, **backend_options: Any) -> Agent:
    """Build an agent from a spec string: ``solver``, ``random``, ``gold``, or a model backend spec
    (``openai:MODEL@BASE_URL``, ``hf:PATH``, ``tiny:NAME``: :func:`~reharness.models.registry.make_backend`,
    which receives ``backend_options``)."""
    if spec in SCRIPTED_AGENTS:
        return SCRIPTED_AGENTS[spec]()
    if ":" in spec:  # a model backend: openai:MODEL@URL, hf:PATH, tiny:NAME (heavy imports stay lazy)
        return make_backend(spec, **backend_options)
    raise _unknown_agent(spec)


def check_agent_spec(spec: str) -> None:
    """Raise the error :func:`make_agent` would raise for a malformed ``spec``, without building or loading
    anything (commands call it before they create any file)."""
    if spec in SCRIPTED_AGENTS:
        return
    if ":" in spec:
        check_spec(spec)
        return
    raise _unknown_agent(spec)


def _unknown_agent(spec: str) -> UnknownNameError:
    return UnknownNameError(
        f"unknown agent {spec!r}",
        hint=did_you_mean(spec, list(SCRIPTED_AGENTS)) + f"; model backends: {', '.join(BACKENDS.shown())}",
    )
