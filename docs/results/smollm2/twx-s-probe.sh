#!/bin/bash
# Issue 37: can Harness-S train SmolLM2-135M on TextWorldExpress Coin Collector on this CPU? Greedy, the model
# solves 0 of 100 held-out games in the base harness (twx-targets.sh). Two measurements, fixed before they ran:
# 1. the pool of the tiny coin agent's three hand-built siblings (snap to admissible, invalid-command hint,
#    loop breaker) over H0 = twx-sampled.yaml, its profile measured with SmolLM2 at the rollout temperature
#    on 8 valid games: does H0 or any sibling ever win with this model when it samples?
# 2. one GRPO step of router rescue (1 train game x k = 4 rollouts, replies of 48 tokens) with all weights
#    trained and with LoRA rank 8: seconds of rollouts and of optimisation per step (metrics.jsonl), to size
#    an `experiment s` for this model.
# What ran: 1, and 2 with all weights trained. The LoRA step was stopped unfinished: the full step's 8 rollouts
# (H0 and the router's rescue) all failed, so the step trained no row and its optimisation time (5 s, no
# gradient) measures nothing LoRA could shorten; the 15 minutes of rollouts are the cost either way.
# Artefacts: docs/results/smollm2/coin-s-probe/. Run from the repository root; each step is skipped when its
# result exists.
R=${OUT:-runs-37}
M=pretrained:smollm2-135m
P=$R/smollm2-coin-pool
mkdir -p "$R"
[ -f $P/profile.json ] || reharness pool build --env twx-coin --agent $M --harness docs/results/smollm2/twx-sampled.yaml \
  --sibling action_validity=snap_to_admissible --sibling action_validity=invalid_action_hint \
  --sibling loop_recovery=loop_breaker --valid-n 8 --seed 0 --concurrency 8 --out $P --json \
  > $R/smollm2-coin-pool.json 2> $R/smollm2-coin-pool.log
for L in 0 8; do
  [ -s $R/smollm2-coin-step-lora$L.json ] || reharness train policy --env twx-coin --agent $M --pool $P --rescue router \
    --k 4 --tasks-per-step 1 --steps 1 --max-new-tokens 48 --lora-rank $L --concurrency 8 --seed 0 \
    --out $R/smollm2-coin-step-lora$L --json > $R/smollm2-coin-step-lora$L.json 2> $R/smollm2-coin-step-lora$L.log
done
