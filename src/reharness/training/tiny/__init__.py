"""Training the built-in tiny target agents from scratch on solver demonstrations (layer ``training``).

The agents themselves (which exist, their recipes, where their weights lie) are :mod:`reharness.models.tiny`;
what lives here renders demonstrations through the runtime and trains, so it sits above the runtime. Light on
import (no torch/transformers): :mod:`.train` and :mod:`.evaluate` load the heavy stack when used.
:func:`.train.train_agent` is declared as the entry point ``default`` of the group
``reharness.tiny_trainers`` (``pyproject.toml``), through which
:func:`reharness.models.tiny.registry.resolve_tiny` trains a missing agent on first use without importing
this layer.

- :mod:`.demos`: solver demonstrations with recovery, rendered through the env's base harness;
- :mod:`.interventions`: harness interventions in demonstrations (hints, blocks, reminders) to heed;
- :mod:`.warmup`: copy warm-up: synthetic "repeat this span" data before the demonstrations;
- :mod:`.tokenizer`: the tiny agents' tokenizer, chat template and supervision masks;
- :mod:`.train`: training from scratch: demos → tokenizer → Llama-style model → TRL SFT → HF directory;
- :mod:`.workdir`: the working directory an interrupted training resumes from;
- :mod:`.evaluate`: greedy evaluation of a tiny agent directory through the real runtime.

``reharness/models/tiny/RECIPE.md`` describes the recipes in prose.
"""
