"""Patches: the ``reharness-patch-v1`` format, static validation (L1) and the sandbox for hook code."""
