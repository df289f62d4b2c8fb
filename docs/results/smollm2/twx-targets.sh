#!/bin/bash
# Issues 35/36: SmolLM2-135M-Instruct as a target on TextWorldExpress Coin Collector, in the base harness and
# after `improve --engineer operators+lenient`, n = 50 held-out test tasks, two seeds. Fixed before it ran:
# the twx override (twx-short.yaml: 25 steps, greedy, 48-token replies), batch 10 train tasks, 4 candidates,
# as targets.sh. A probe before it (2 test episodes, seed 0): every reply echoes the room description, which
# the kit reads as a command (invalid_action on all 50 steps). Run from the repository root; each step is
# skipped when its result exists; runs resume.
# No candidate time limit (--candidate-timeout 0): at SmolLM2's CPU speed a candidate's 10-task rerun takes
# longer than the 30-minute default (the first twx-coin seed-0 attempt timed out 2 of its 4 candidates).
R=${OUT:-runs-36}
M=pretrained:smollm2-135m
H=docs/results/smollm2/twx-short.yaml
mkdir -p "$R"
for E in ${ENVS:-twx-coin}; do
  for S in ${SEEDS:-0 1}; do
    [ -s $R/$E-improve-s$S.json ] || reharness improve --env $E --agent $M --engineer operators+lenient \
      --harness $H --batch-size 10 --k 4 --eval-n 50 --seed $S --concurrency 8 --candidate-timeout 0 \
      --out $R/$E-improve-s$S --json > $R/$E-improve-s$S.json 2> $R/$E-improve-s$S.log
    if grep -q '"heldout": null' $R/$E-improve-s$S.json && [ ! -s $R/$E-base-s$S.json ]; then
      reharness run --env $E --agent $M --harness $H --split test --n 50 --seed $S \
        --concurrency 8 --out $R/$E-base --json > $R/$E-base-s$S.json 2> $R/$E-base-s$S.log
    fi
  done
done
