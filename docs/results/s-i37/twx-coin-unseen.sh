#!/bin/bash
# Issues 35/37: experiment s on twx-coin with training tasks the start policy never saw. The first coin agent
# (twx-coin.sh) was trained on gold paths of all 1,000 train games and won 54% of its rollouts on them (3 of
# 40 groups all-failed per arm: nothing for rescue to act on). This one is trained on 500 demos (same recipe
# and steps, `agent train --env twx-coin --size S --seed 0 --demos 500`; committed in
# docs/results/twx-coin/agent-d500), and `experiment s --unseen-tasks` draws only from the other 500 train
# games. Pool: the same three hand-built siblings over H0 = the base harness at a 25-step limit (h25.yaml).
# Sized to fit one session per training seed on 2 cores, fixed before any result: 8 GRPO steps of 4 tasks x
# 8 rollouts at db's valid-chosen lr 5e-5 (not re-tuned on twx), every arm but the compute-matched `none`
# (--no-equal-rollouts), 100 test tasks drawn with seed 37035 (no earlier table used it).
# Run from the repository root: SEEDS="0" or "1" (default both); each step is skipped when its result exists;
# experiment s resumes.
R=${OUT:-runs-37}
mkdir -p "$R"
A=docs/results/twx-coin/agent-d500
P=${POOL:-docs/results/twx-coin/d500-pool}  # committed; seed 0 used the identical pool built by the line below
[ -f $P/profile.json ] || reharness pool build --env twx-coin --agent hf:$A --harness docs/results/twx-coin/h25.yaml \
  --sibling action_validity=snap_to_admissible --sibling action_validity=invalid_action_hint \
  --sibling loop_recovery=loop_breaker --valid-n 20 --seed 0 --out $P --json > $R/coin-d500-pool.json
for S in ${SEEDS:-0 1}; do
  [ -f $R/coin-unseen-s$S/result.json ] || reharness experiment s --env twx-coin --agent hf:$A --pool $P --unseen-tasks \
    --steps 8 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 100 --test-seed 37035 --no-equal-rollouts \
    --seed $S --out $R/coin-unseen-s$S --json > $R/coin-unseen-s$S.json 2> $R/coin-unseen-s$S.log
done
