"""Training (layer ``training``): the harness engineer (SFT, GRPO), an agent policy (GRPO with rescue) and
the built-in tiny agents (SFT from scratch).

The only layer that trains with ``torch``/``transformers``/``trl`` (``models`` loads them to serve), and only
inside the functions that need them.

The engineer (Harness-R1):

- :mod:`.data`: failure packets from train/valid batches of a target, and the cold-start SFT set (teacher
  proposals validated by paired rerun), stored as JSONL while collected and exported as Parquet;
- :mod:`.engineer_model`: the built-in tiny engineer (tokenizer and Llama-style model from scratch), training
  rows' prompts, and the model-directory conventions any Hugging Face engineer follows;
- :mod:`.sft`: cold-start SFT with TRL's ``SFTTrainer`` (loss on the reply only);
- :mod:`.rerun`: the GRPO reward — the paired rerun of each completion's patch on its packet's batch;
- :mod:`.grpo`: outcome-based GRPO with TRL's ``GRPOTrainer``;
- :mod:`.grpo_select`: GRPO checkpoint selection on ``valid``, and the greedy program's change from SFT;
- :mod:`.constrained_rollout`: GRPO rollouts of a repair-program engineer decoded under the program grammar;
- :mod:`.select`: model selection on ``valid``: the mean Δ_B of an engineer's greedy patch per packet.

The policy (Harness-S):

- :mod:`.policy_config`: the validated options of ``reharness train policy``;
- :mod:`.policy_train`: ``reharness train policy`` from start to model directory;
- :mod:`.unseen_tasks`: ``--unseen-tasks``: the train tasks a tiny start policy was not shown as demos;
- :mod:`.policy_grpo`: TRL's ``GRPOTrainer`` whose rollouts are our episodes;
- :mod:`.rollouts`: training rollouts: real episodes of the policy being trained, through our runtime;
- :mod:`.ray_rollouts`: ``--executor ray``: a step's rollouts played by Ray actors holding policy copies;
- :mod:`.rescue`: complementary rescue: one step's groups, all-failed H0 groups re-sampled (under a sibling);
- :mod:`.reanchor`: the pool's profile re-measured with the live weights, at the rollout temperature;
- :mod:`.episode_rows`: episodes → GRPO rows: token sequences, loss masks, group-normalised advantages;
- :mod:`.row_chunks`: one forward pass per row: an accumulation chunk split into its rows, padding stripped.

The tiny target agents:

- :mod:`.tiny`: solver demonstrations through the runtime, the tokenizer, SFT from scratch, greedy evaluation.

Shared:

- :mod:`.launch`: ``--dry-run``: the resolved TRL arguments and the ``accelerate launch`` command line;
- :mod:`.progress`: progress of TRL trainers as plain callbacks (``progress(stage, step, total, metrics)``);
- :mod:`.resume`: resuming a trainer from its last checkpoint without training past ``max_steps``.
"""
