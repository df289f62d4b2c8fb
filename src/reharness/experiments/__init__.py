"""Scripted studies that reproduce the shape of the papers' tables at small scale (layer ``experiments``).

- :mod:`.r1`: Harness-R1's main table — no patch, Self-Refine, the operators teacher, the SFT-only engineer
  and the GRPO engineer on held-out (test-split) batches of a frozen target (``reharness experiment r1``).
"""
