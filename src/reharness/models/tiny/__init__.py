"""Built-in tiny target agents: small causal LMs trained from scratch on solver demonstrations.

Light on import (no torch/transformers): :mod:`.train` and :mod:`.evaluate` load the heavy stack when used.
"""
