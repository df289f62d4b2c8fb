"""Training the harness engineer (layer ``training``): the only layer besides ``models.tiny`` that imports
``torch``/``transformers``/``trl``, and only inside the functions that need them.

- :mod:`.data`: failure packets from train/valid batches of a target, and the cold-start SFT set (teacher
  proposals validated by paired rerun), stored as JSONL while collected and exported as Parquet;
- :mod:`.engineer_model`: the built-in tiny engineer (tokenizer and Llama-style model from scratch) and the
  model-directory conventions any Hugging Face engineer follows;
- :mod:`.sft`: cold-start SFT with TRL's ``SFTTrainer`` (loss on the reply only);
- :mod:`.rerun`: the GRPO reward — the paired rerun of each completion's patch on its packet's batch;
- :mod:`.grpo`: outcome-based GRPO with TRL's ``GRPOTrainer``.
"""
