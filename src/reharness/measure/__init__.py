"""Measurement (layer ``measure``): what a harness change does to a frozen agent, on the same tasks and seeds.

The one measurement layer that ``engineer`` (judging candidate patches), ``pool`` (siblings' profiles and the
held-out table) and ``training`` (the engineer's GRPO reward, its data) share. Every measured batch is a
:class:`~reharness.runtime.resolved.ResolvedRun`, resolved once; a patched or sibling rerun is the baseline's
batch under another harness (``run.with_harness``), so pairing holds by construction and is still checked.

- :mod:`.baseline`: frozen targets and cached baselines: what a patch is compared against, paid for once;
- :mod:`.paired`: paired evaluation: rerun the frozen target with a patch on the baseline's tasks and seeds;
- :mod:`.prefix`: prefix reuse: replay a baseline's model outputs until a patched episode diverges.
"""
