"""Model backends: agents backed by a language model (layer ``models``).

- ``openai:MODEL@BASE_URL`` — :class:`~reharness.models.openai_backend.OpenAIBackend`, any OpenAI-compatible
  chat-completions server (vLLM, SGLang, llama.cpp, Ollama, hosted APIs);
- ``hf:PATH`` — :class:`~reharness.models.hf_backend.HFBackend`, a local Hugging Face chat model, in-process,
  micro-batched across concurrent episodes, seeded per request;
- ``tiny:NAME`` — a built-in tiny agent, loaded through the ``hf`` backend.

:func:`make_backend` builds a backend from its spec (whole agent specs, scripted agents included, resolve one
layer up: :func:`reharness.runtime.agent_specs.make_agent`); :mod:`reharness.models.server` serves any backend
over the OpenAI API. This package ``__init__`` stays light: names resolve lazily, so importing it never
imports torch, transformers or httpx.

Modules:

- :mod:`.base`: what every backend shares: the tool-call text convention and message conversion;
- :mod:`.registry`: backend specs → backends (:func:`make_backend`), checked before anything loads;
- :mod:`.openai_backend`: the OpenAI-compatible chat backend;
- :mod:`.hf_backend`: the in-process Hugging Face causal LM backend, micro-batched, seeded per request;
- :mod:`.hf_cache`: the hf backend's key/value cache: prefix reuse, chunked prompts, in-place decoding;
- :mod:`.hf_decode`: the hf backend's decoding loop (rows decoded together, each leaving as its reply ends);
- :mod:`.hf_sampling`: token choice of the in-process decoder: top-p sampling and the grammar constraint;
- :mod:`.server`: a small OpenAI-compatible chat-completions server for any backend (stdlib asyncio only);
- :mod:`.server_request`: parsing and schema checks of the server's request bodies (a bad field → 400);
- :mod:`.server_stream`: the server's server-sent-event chunks, streamed as vLLM's server streams them;
- :mod:`.pretrained`: pretrained models by name (``pretrained:smollm2-135m``) and GGUF files, converted once;
- :mod:`.llamacpp_backend`: the llama.cpp engine for GGUF models (slots with prefix reuse, seeded);
- :mod:`.tiny`: the built-in tiny target agents: recipes, demonstrations, training and evaluation.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "make_backend": "reharness.models.registry",
    "parse_spec": "reharness.models.registry",
    "resolve_tiny": "reharness.models.registry",
    "BackendSpec": "reharness.models.registry",
    "OpenAIBackend": "reharness.models.openai_backend",
    "HFBackend": "reharness.models.hf_backend",
    "ChatServer": "reharness.models.server",
    "Fault": "reharness.models.server",
    "ServerThread": "reharness.models.server",
    "parse_text_tool_calls": "reharness.models.base",
    "template_messages": "reharness.models.base",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'reharness.models' has no attribute {name!r}")
