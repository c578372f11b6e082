#!/usr/bin/env bash
# wf report beside wf wf2 and GoAccess (same log format, --no-ip-validation so
# that host-name clients are read as GoAccess users' logs are), on one warm
# generated log: interleaved runs, medians (bench/compare.py).
#   1. wf wf2, wc -l, wf report (and OLD's, to measure a change): ratios to wf wf2.
#   2. GoAccess first, then wf report: ratios to GoAccess.
# Usage: bench/report.sh [SIZE]   (SIZE of the log, default 256M; RUNS=5 fast,
#        SLOW_RUNS=3 for GoAccess; WF=path/to/wf skips the release build;
#        OLD=path/to/another/wf adds its wf report beside this one's)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZE=${1:-256M}
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-3}
if [ -z "${WF:-}" ]; then
  cargo build --release -q
  WF="${CARGO_TARGET_DIR:-$ROOT/target}/release/wf"
fi
command -v goaccess >/dev/null || { echo "bench: 'goaccess' not found (apt-get install goaccess)" >&2; exit 2; }
DATA=${WF_BENCH_DIR:-/tmp/wf-bench}
mkdir -p "$DATA"
LOG="$DATA/wf2-$SIZE.log"
[ -s "$LOG" ] || "$WF" gen wf2 --size "$SIZE" --seed 1 -o "$LOG"
cat "$LOG" > /dev/null
GA="goaccess $LOG --log-format=COMBINED --no-global-config --no-ip-validation --no-progress"
old=()
if [ -n "${OLD:-}" ]; then
  old=("old wf report=$OLD report $LOG" "old wf report -o html=$OLD report -o $DATA/report-old.html $LOG")
fi
echo "== wf report, warm cache, $(du -h "$LOG" | cut -f1) log ($(wc -l < "$LOG") lines), $(nproc) cores, $(date -u +%F)"
echo "== ratios to wf wf2 (RUNS=$RUNS)"
python3 bench/compare.py --runs "$RUNS" \
  "wf wf2=$WF wf2 $LOG" \
  "wc -l=wc -l $LOG" \
  "${old[@]}" \
  "wf report=$WF report $LOG" \
  "wf report -o html=$WF report -o $DATA/report.html $LOG"
echo "== ratios to GoAccess (SLOW_RUNS=$SLOW_RUNS)"
python3 bench/compare.py --runs "$SLOW_RUNS" --warmup 0 \
  "goaccess -o html=$GA -o $DATA/goaccess.html" \
  "${old[@]:1}" \
  "wf report -o html=$WF report -o $DATA/report.html $LOG" \
  "wf wf2=$WF wf2 $LOG"
