#!/bin/bash
# Issues 35/37: experiment s on twx-coin with training tasks the start policy never saw. The first coin agent
# (twx-coin.sh) was trained on gold paths of all 1,000 train games and won 54% of its rollouts on them (3 of
# 40 groups all-failed per arm: nothing for rescue to act on). This agent is trained on 500 demos (same recipe
# and steps, `--demos 500`); `experiment s --unseen-tasks` draws only from the other 500 train games. Pool:
# the same three hand-built siblings (fixed before any result); hyper-parameters as twx-coin.sh (db's, chosen
# on valid there; not re-tuned); 300 test tasks drawn with seed 37035. Run from the repository root; each step
# is skipped when its result exists; experiment s resumes.
R=${OUT:-runs-37}
mkdir -p "$R"
A=$R/coin-agent-d500
P=$R/coin-d500-pool
[ -f $A/provenance.json ] || reharness agent train --env twx-coin --size S --seed 0 --demos 500 --out $A --json \
  > $R/coin-agent-d500.json
for S in 0 1; do
  [ -s $R/coin-d500-valid-s$S.json ] || reharness run --env twx-coin --agent hf:$A --split valid --n 100 --seed $S \
    --out $R/coin-d500-runs --json > $R/coin-d500-valid-s$S.json
done
[ -f $P/profile.json ] || reharness pool build --env twx-coin --agent hf:$A --sibling action_validity=snap_to_admissible \
  --sibling action_validity=invalid_action_hint --sibling loop_recovery=loop_breaker --valid-n 40 --seed 0 \
  --out $P --json > $R/coin-d500-pool.json
for S in 0 1; do
  [ -f $R/coin-unseen-s$S/result.json ] || reharness experiment s --env twx-coin --agent hf:$A --pool $P --unseen-tasks \
    --steps 10 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37035 --seed $S \
    --out $R/coin-unseen-s$S --json > $R/coin-unseen-s$S.json 2> $R/coin-unseen-s$S.log
done
