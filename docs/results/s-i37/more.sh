#!/bin/bash
# Issue 37, after the db seeds (db-seeds.sh): shop at 20 steps on three training seeds, then the mask/executed and
# re-anchoring ablations. Hyper-parameters are db's, chosen on valid (lr 5e-5, 20 steps, k 8, 4 tasks a step);
# shop's were not re-tuned. Test tasks: 300 drawn with seed 37000 (never used by an earlier table).
# Each step is skipped when its result exists; experiment s resumes.
mkdir -p "${OUT:-runs-37}"
R=${OUT:-runs-37}
S_ARGS="--steps 20 --k 8 --tasks-per-step 4 --learning-rate 5e-5 --test-n 300 --test-seed 37000"
run() {  # OUT ARGS...
  local out=$1; shift
  [ -f $R/$out/result.json ] || reharness experiment s "$@" --out $R/$out --json > $R/$out.json 2> $R/$out.log
}
run shop-s0 --env shop --pool docs/results/pool-shop $S_ARGS --seed 0
run db-executed-s0 --env db --pool docs/results/pool-db-hints $S_ARGS --seed 0 --methods none,router --rewritten-turns executed --no-equal-rollouts
run db-noreanchor-s0 --env db --pool docs/results/pool-db-hints $S_ARGS --seed 0 --methods router --reanchor-every 0 --no-equal-rollouts
run shop-s1 --env shop --pool docs/results/pool-shop $S_ARGS --seed 1
# Router only (changed 2026-12-07, before it started): the ablation compares router arms (experiment s-compare), an
# arm trains the same without the others (db-noreanchor-s0 reproduced db-s0's router step for step), and its none arm
# would repeat shop-s0's.
run shop-executed-s0 --env shop --pool docs/results/pool-shop $S_ARGS --seed 0 --methods router --rewritten-turns executed --no-equal-rollouts
run shop-s2 --env shop --pool docs/results/pool-shop $S_ARGS --seed 2
