"""Scripted studies that reproduce the shape of the papers' tables at small scale (layer ``experiments``).

- :mod:`.r1`: Harness-R1's main table — no patch, Self-Refine, the operators teacher, the SFT-only engineer
  and the GRPO engineer on held-out (test-split) batches of a frozen target (``reharness experiment r1``).
- :mod:`.s`: Harness-S's claim — policy GRPO with sibling rescue (router) against policy-only GRPO,
  equal-compute H0 resampling and a random sibling, evaluated in H0 on held-out tasks, plus Rank-1
  (``reharness experiment s``).
"""
