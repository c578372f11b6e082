#!/usr/bin/env bash
# wf wf2 beside wc -l, the same report in awk (mawk), a naive Python version and
# GoAccess, on the same warm 1 GiB generated log; then cold, wf wf2 vs wc -l.
# Usage: bench/wf2.sh   (RUNS=7 fast peers, SLOW_RUNS=3 slow peers)
source "$(dirname "$0")/common.sh"
need mawk mawk
need goaccess goaccess
SLOW_RUNS=${SLOW_RUNS:-3}
gen_log
warm "$LOG"
AWK="mawk -f examples/wf2/reduce.awk $LOG | mawk -f examples/wf2/combine.awk"
echo "== wf wf2, warm cache, $(du -h "$LOG" | cut -f1) log, $(nproc) cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "wc -l=wc -l $LOG" \
  "wf wf2=$WF wf2 $LOG" \
  "wf wf2 -j 1=$WF wf2 -j 1 $LOG"
echo "== slow peers (SLOW_RUNS=$SLOW_RUNS), ratios to wc -l"
python3 bench/compare.py --runs "$SLOW_RUNS" --warmup 0 \
  "wc -l=wc -l $LOG" \
  "wf wf2=$WF wf2 $LOG" \
  "mawk report=$AWK" \
  "python naive=python3 tests/naive/wf2.py $LOG" \
  "goaccess=goaccess $LOG --log-format=COMBINED --no-global-config -o $DATA/goaccess.json 2>/dev/null"
echo "== cold cache (evicted with posix_fadvise before every run)"
python3 bench/compare.py --runs "$RUNS" --cold "$LOG" \
  "wc -l=wc -l $LOG" \
  "wf wf2=$WF wf2 $LOG"
