#!/usr/bin/env bash
# wf count vs wc -l and rg -c '' on a warm 1 GiB generated log.
# Usage: bench/count.sh   (RUNS=7 by default; WF_BENCH_DIR=/tmp/wf-bench)
source "$(dirname "$0")/common.sh"
need rg ripgrep
gen_log
warm "$LOG"
echo "== wf count, warm cache, $(du -h "$LOG" | cut -f1) log, $(nproc) cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "wc -l=wc -l $LOG" \
  "wf count=$WF count $LOG" \
  "wf count -j 1=$WF count -j 1 $LOG" \
  "rg -c ''=rg -c '' $LOG"
