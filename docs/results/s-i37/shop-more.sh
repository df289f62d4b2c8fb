#!/bin/bash
# Issue 37, shop training seeds 1 and 2 again, after their every-arm runs (more.sh) were lost before anything
# of them was stored: the two arms the central question compares (none, router), the same options as more.sh
# otherwise (db's hyper-parameters, frozen on valid; 300 test tasks drawn with seed 37000). Run from the
# repository root; one seed per core; each resumes where it stopped.
R=${OUT:-runs-37}
mkdir -p "$R"
S_ARGS="--steps 20 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37000"
for S in "$@"; do  # seeds, e.g. 1 2
  [ -f $R/shop-s$S/result.json ] || reharness experiment s --env shop --pool docs/results/pool-shop $S_ARGS \
    --seed $S --methods none,router --no-equal-rollouts --out $R/shop-s$S --json > $R/shop-s$S.json 2> $R/shop-s$S.log
done
