"""Built-in tiny target agents: small causal LMs trained from scratch on solver demonstrations.

Light on import (no torch/transformers): :mod:`.train` and :mod:`.evaluate` load the heavy stack when used.

- :mod:`.spec`: what an environment's kit tells the tiny-agent recipe (``EnvKit.tiny``);
- :mod:`.config`: typed recipes: model shape, data and optimisation per (environment, size);
- :mod:`.demos`: solver demonstrations with recovery, rendered through the env's base harness;
- :mod:`.interventions`: harness interventions in demonstrations (hints, blocks, reminders) to heed;
- :mod:`.warmup`: copy warm-up: synthetic "repeat this span" data before the demonstrations;
- :mod:`.tokenizer`: the tiny agents' tokenizer, chat template and supervision masks;
- :mod:`.train`: training from scratch: demos → tokenizer → Llama-style model → TRL SFT → HF directory;
- :mod:`.evaluate`: greedy evaluation of a tiny agent directory through the real runtime;
- :mod:`.registry`: which tiny agents exist, where their weights lie (``weights/``), what produced them.

``RECIPE.md`` describes the recipe in prose.
"""
