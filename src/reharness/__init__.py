"""reharness: measure, patch, evolve and learn an LLM agent's harness.

The public API is re-exported here lazily-light: importing ``reharness`` never imports torch, transformers,
trl or ray (those load only inside the modules that need them). Importing it registers the built-in
environments with gymnasium (ids and entry-point strings, no env code), so after ``import reharness`` (or
``gymnasium.register_envs(reharness)``) ``gymnasium.make(ID)`` with a built-in kit's gymnasium id works like
any gymnasium env package's.
"""

from reharness.core.errors import ReharnessError
from reharness.core.types import ChatRequest, ChatResponse, Message, ToolCall
from reharness.envs.registry import register_envs as _register_envs

__version__ = "0.1.0"

_register_envs()

__all__ = ["ChatRequest", "ChatResponse", "Message", "ReharnessError", "ToolCall", "__version__"]
