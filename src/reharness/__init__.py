"""reharness: measure, patch, evolve and learn an LLM agent's harness.

The public API is re-exported here lazily-light: importing ``reharness`` never imports torch, transformers,
trl or ray (those load only inside the modules that need them). Importing it registers the built-in
environments with gymnasium (ids and entry-point strings, no env code), so after ``import reharness`` (or
``gymnasium.register_envs(reharness)``) ``gymnasium.make(ID)`` with a built-in kit's gymnasium id works like
any gymnasium env package's.

Subpackages, lowest layer first (imports point downward only; DESIGN.md, "Layers"):

- :mod:`.core`: chat types, typed errors, hashing, resume checks, the confined worker core of every sandbox;
- :mod:`.envs`: the text-environment base class, the environment-kit API, the kit registry and the checker;
- :mod:`.store`: the trajectory store: typed records, append-only JSONL per run, SQLite index, Parquet export;
- :mod:`.models`: model backends (OpenAI-compatible HTTP, in-process Hugging Face), their server, tiny agents;
- :mod:`.runtime`: harness configs and overlays, hook points and effects, the episode loop, batch executors;
- :mod:`.patches`: patch formats and dialects, static validation (L1) and the sandbox for hook code;
- :mod:`.failures`: failure codes, generic detectors, runtime signals and failure packets;
- :mod:`.measure`: cached baselines, paired evaluation and prefix reuse on a batch resolved once;
- :mod:`.engineer`: harness engineers that propose patches and ``reharness improve``;
- :mod:`.kits`: the environment kits: built-in environments and real benchmarks on the public kit API;
- :mod:`.pool`: Harness-S's sibling pool: directions, siblings, evolution, behaviour profiles, the router;
- :mod:`.training`: TRL training: the engineer's SFT and GRPO, policy GRPO with sibling rescue;
- :mod:`.experiments`: scripted studies that reproduce the shape of the papers' tables at small scale;
- :mod:`.view`: the trajectory viewer: one self-contained HTML page of a run, improve, pool or training;
- :mod:`.cli`: the ``reharness`` command (typer), one module per command group (``python -m reharness``).
"""

from reharness.core.errors import ReharnessError
from reharness.core.types import ChatRequest, ChatResponse, Message, ToolCall
from reharness.envs.registry import register_envs as _register_envs

__version__ = "0.1.0"

_register_envs()

__all__ = ["ChatRequest", "ChatResponse", "Message", "ReharnessError", "ToolCall", "__version__"]
