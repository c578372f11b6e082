#!/usr/bin/env bash
# A `wf bench` sweep: wf wf2 on the 1 GiB generated log, cold and warm,
# -j 1,2,4,8, RUNS runs per setting; table to bench/results/wf2-bench-1g.txt and
# plot to bench/results/wf2-bench-1g.svg (the README shows a smaller run's plot).
# Usage: bench/wfbench.sh   (RUNS=5; WF_BENCH_DIR=/tmp/wf-bench)
RUNS=${RUNS:-5}
source "$(dirname "$0")/common.sh"
gen_log
mkdir -p bench/results
"$WF" bench --cache both --threads 1,2,4,8 --runs "$RUNS" \
  --plot bench/results/wf2-bench-1g.svg -- wf2 "$LOG" | tee bench/results/wf2-bench-1g.txt
