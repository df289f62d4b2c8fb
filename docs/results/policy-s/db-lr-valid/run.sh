#!/bin/bash
cd /work/SRC2
export PYTHONPATH=/work/SRC2/src OMP_NUM_THREADS=1
R="/work/venv/bin/python -c 'from reharness.cli.main import app; app()'"
for lr in 5e-5; do
  for m in none router; do
    eval $R train policy --env db --agent tiny:db-S --pool /work/dbpool --rescue $m --k 8 --steps 20 --tasks-per-step 4 --learning-rate $lr --seed 0 --out /work/dblr/$m-$lr --json > /work/dblr/$m-$lr.json 2> /work/dblr/$m-$lr.err
  done
done
for d in /work/dblr/none-5e-5 /work/dblr/router-5e-5 /work/db20-s0/db/none /work/db20-s0/db/router; do
  n=$(echo $d | tr '/' '_')
  eval $R run --env db --agent hf:$d/model --split valid --n 100 --seed 0 --json > /work/dblr/valid$n.json 2> /work/dblr/valid$n.err
done
eval $R run --env db --agent tiny:db-S --split valid --n 100 --seed 0 --json > /work/dblr/valid_start.json 2> /work/dblr/valid_start.err
echo done > /work/dblr/done
