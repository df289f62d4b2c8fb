#!/bin/bash
# Issue 37: every pooled table and ablation comparison of docs/harness-s-training.md, regenerated from the
# stored artefacts in this directory only (no model runs). Run from the repository root; each output is
# rewritten byte for byte as committed. A run not stored yet (shop while it trains) is skipped.
set -e
D=docs/results/s-i37
seeds() {  # OUT RUN...
  local out=$1; shift
  for run in "$@"; do [ -f "$run/result.json" ] || { echo "skip $out: $run not stored yet"; return 0; }; done
  reharness experiment s-seeds "$@" --json > "$out"
}
compare() {  # OUT RUN_A RUN_B METHOD
  [ -f "$2/result.json" ] && [ -f "$3/result.json" ] || { echo "skip $1: a run not stored yet"; return 0; }
  reharness experiment s-compare "$2" "$3" --method "$4" --json > "$1"
}
seeds $D/db-seeds.json $D/db-s0 $D/db-s1 $D/db-s2
# Coin Collector: seeds 0 and 1, and seed 2 once it is stored (it was started after the first two were published)
coin=($D/twx-coin-unseen-s0 $D/twx-coin-unseen-s1)
[ -f $D/twx-coin-unseen-s2/result.json ] && coin+=($D/twx-coin-unseen-s2)
seeds $D/twx-coin-unseen-seeds.json "${coin[@]}"
seeds $D/shop-seeds.json $D/shop-s0 $D/shop-s1 $D/shop-s2
compare $D/db-executed-vs-mask.json $D/db-s0 $D/db-executed-s0 router
compare $D/db-noreanchor-vs-reanchor.json $D/db-s0 $D/db-noreanchor-s0 router
compare $D/shop-executed-vs-mask.json $D/shop-s0 $D/shop-executed-s0 router
