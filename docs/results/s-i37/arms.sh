#!/bin/bash
# Issue 37: some arms of `experiment s` on more training seeds, with more.sh's options (db's hyper-parameters,
# frozen on valid; 300 test tasks drawn with seed 37000). Run from the repository root; one call per core;
# each seed resumes where it stopped, and is skipped once its result exists.
#   bash docs/results/s-i37/arms.sh ENV POOL METHODS SEED...
# docs/harness-s-training.md gives the call that ran two arms on two seeds whose every-arm runs (more.sh) were
# lost before anything of them was stored.
set -e
[ $# -ge 4 ] || { echo "usage: $0 ENV POOL METHODS SEED..." >&2; exit 2; }
env=$1 pool=$2 methods=$3; shift 3
R=${OUT:-runs-37}
mkdir -p "$R"
S_ARGS="--steps 20 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37000"
for S in "$@"; do
  out=$R/$env-s$S
  [ -f "$out/result.json" ] || reharness experiment s --env "$env" --pool "$pool" $S_ARGS --seed "$S" \
    --methods "$methods" --no-equal-rollouts --out "$out" --json > "$out.json" 2> "$out.log"
done
