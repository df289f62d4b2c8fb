#!/bin/bash
# Issues 35/37: Harness-S on TextWorldExpress Coin Collector with the tiny S agent (valid 27% / 18%) and the
# evolved one-sibling pool in docs/results/twx-coin/pool. Fixed before it ran. Hyper-parameters were not tuned
# on twx: db's valid-chosen learning rate (5e-5), 10 GRPO steps of 4 tasks x 8 rollouts for the CPU's time;
# 300 test tasks drawn with seed 37035 (never used by an earlier table). Run from the repository root; each
# step is skipped when its result exists; experiment s resumes.
R=${OUT:-runs-35}
mkdir -p "$R"
A=$R/coin-agent-s0
[ -f $A/config.json ] || reharness agent train --env twx-coin --size S --seed 0 --out $A
for S in 0 1; do
  [ -f $R/coin-s-s$S/result.json ] || reharness experiment s --env twx-coin --agent hf:$A --pool docs/results/twx-coin/pool \
    --steps 10 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37035 --seed $S \
    --out $R/coin-s-s$S --json > $R/coin-s-s$S.json 2> $R/coin-s-s$S.log
done
