#!/usr/bin/env bash
# wf report beside GoAccess (same log format, --no-ip-validation so that host-name
# clients are read as GoAccess users' logs are) and wc -l, on one warm generated
# log: interleaved runs, medians, ratios to wc -l (bench/compare.py).
# Usage: bench/report.sh [SIZE]   (SIZE of the log, default 256M; RUNS=5 fast,
#        SLOW_RUNS=3 for GoAccess; WF=path/to/wf skips the release build)
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
echo "== wf report, warm cache, $(du -h "$LOG" | cut -f1) log ($(wc -l < "$LOG") lines), $(nproc) cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "wc -l=wc -l $LOG" \
  "wf wf2=$WF wf2 $LOG" \
  "wf report=$WF report $LOG" \
  "wf report -o html=$WF report -o $DATA/report.html $LOG"
echo "== with GoAccess (SLOW_RUNS=$SLOW_RUNS), ratios to wc -l"
python3 bench/compare.py --runs "$SLOW_RUNS" --warmup 0 \
  "wc -l=wc -l $LOG" \
  "wf report -o html=$WF report -o $DATA/report.html $LOG" \
  "goaccess -o html=$GA -o $DATA/goaccess.html" \
  "goaccess -o json=$GA -o $DATA/goaccess.json"
