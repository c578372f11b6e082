#!/usr/bin/env bash
# widefinder.dask.wf2 on a 2-worker LocalCluster beside `wf wf2` and what Dask
# users write today for the same report (dask.bag.read_text, a Python regex per
# line, frequencies/topk: bench/dask_bag_wf2.py), warm cache, one run:
#   the cluster is started once (its start time is printed), then RUNS
#   interleaved rounds; only the computes are timed (bench/dask_wf2.py).
# Every answer is checked against `wf wf2 --json` (the baseline first on a 2 MB log).
# Usage: bench/dask.sh   (RUNS=3; SIZE=1G, or e.g. SIZE=64M for a quick run;
#   BLOCKSIZE for widefinder.dask (default 256MiB, or a quarter of a smaller
#   log), BAG_BLOCKSIZE for dask.bag (default 64MiB, or a sixteenth);
#   Python from $WF_PYTHON, default .venv/bin/python, with the widefinder wheel
#   and dask installed: run scripts/test first). The baseline takes a minute or
#   more per run on 1 GiB.
RUNS=${RUNS:-3}
source "$(dirname "$0")/common.sh"
PY=${WF_PYTHON:-$ROOT/.venv/bin/python}
"$PY" -c 'import widefinder.dask, dask.bag, distributed' 2>/dev/null || {
  echo "bench: widefinder.dask, dask.bag or distributed not importable by $PY (scripts/test installs them)" >&2
  exit 2
}
SIZE=${SIZE:-1G}
if [ "$SIZE" = 1G ]; then
  gen_log
else
  LOG="$DATA/wf2-$SIZE.log"
  [ -s "$LOG" ] || "$WF" gen wf2 --size "$SIZE" --seed 1 -o "$LOG"
fi
SMALL="$DATA/wf2-2m.log"
[ -s "$SMALL" ] || "$WF" gen wf2 --size 2M --seed 3 -o "$SMALL"
warm "$LOG"
echo "== widefinder.dask.wf2, warm cache, $(du -h "$LOG" | cut -f1) log, $(nproc) cores, $(date -u +%F), RUNS=$RUNS"
"$PY" bench/dask_wf2.py --runs "$RUNS" --check "$SMALL" \
  --blocksize "${BLOCKSIZE:-auto}" --bag-blocksize "${BAG_BLOCKSIZE:-auto}" "$WF" "$LOG"
