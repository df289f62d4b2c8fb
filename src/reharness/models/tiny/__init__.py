"""Built-in tiny target agents, as inference sees them: which exist, their recipes, where their weights lie.

Light on import (no torch/transformers). Training them (solver demonstrations rendered through the runtime,
the tokenizer, TRL SFT, greedy evaluation) is the training layer's job: :mod:`reharness.training.tiny`.

- :mod:`.spec`: what an environment's kit tells the tiny-agent recipe (``EnvKit.tiny``);
- :mod:`.config`: typed recipes: model shape, data and optimisation per (environment, size);
- :mod:`.registry`: which tiny agents exist, where their weights lie (``weights/``), what produced them, and
  training a missing one on first use through the trainer the training layer declares (an entry point).

``RECIPE.md`` describes the recipes in prose (what was measured and why they look the way they do).
"""
