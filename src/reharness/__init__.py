"""reharness: measure, patch, evolve and learn an LLM agent's harness.

The public API is re-exported here lazily-light: importing ``reharness`` never imports torch,
transformers, trl or ray (those load only inside the modules that need them).
"""

from reharness.core.errors import ReharnessError
from reharness.core.types import ChatRequest, ChatResponse, Message, ToolCall

__version__ = "0.1.0"

__all__ = ["ChatRequest", "ChatResponse", "Message", "ReharnessError", "ToolCall", "__version__"]
