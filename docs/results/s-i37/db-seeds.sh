#!/bin/bash
# Issue 37: the db evidence runs, one per training seed (seed 0 is in docs/results/s-i37/db-s0), every choice
# frozen on valid before any of them ran (docs/harness-s-training.md): lr 5e-5, 20 steps, k 8, 4 tasks a step,
# the pool-db-hints pool, 300 test tasks drawn with seed 37000. Then the pooled table, from stored files only.
# Run from the repository root: SEEDS="1 2" by default; each seed is skipped when its result exists;
# experiment s resumes.
R=${OUT:-runs-37}
mkdir -p "$R"
for S in ${SEEDS:-1 2}; do
  [ -f $R/db-s$S/result.json ] || reharness experiment s --env db --pool docs/results/pool-db-hints --steps 20 --k 8 \
    --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37000 --seed $S --out $R/db-s$S --json \
    > $R/db-s$S.json 2> $R/db-s$S.log
done
